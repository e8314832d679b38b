/**
 * Where ended jobs should live, measured before the store is changed (issue 47, item 4):
 *
 *   npx tsx bench/store-index-size.bench.ts [--jobs 50000] [--batch 64] [--rounds 2] [--passes 2] [--durable]
 *     [--vacuum-every N] [--retain N]
 *
 * Two layouts of the job table on one embedded PostgreSQL, a fresh database each, in
 * alternating rounds (which goes first alternates too):
 *
 * - `one-table`: the store's tables as its migrations make them (sw_jobs, its five
 *   indexes since migration 0008): a job ends with an UPDATE and stays in sw_jobs, and in its indexes, until its
 *   retention deletes it (today's store).
 * - `split`: the same migrations, plus `sw_ended_jobs` (sw_jobs's columns; a primary key,
 *   the newest-first list's index, the time rules' index): a job ends with one
 *   statement that deletes it from sw_jobs and inserts it there
 *   (`WITH ended AS (DELETE … RETURNING …) INSERT INTO sw_ended_jobs …`), so sw_jobs's
 *   indexes hold live jobs only; the retention deletes from sw_ended_jobs.
 *
 * Each pass drains `--jobs` jobs in batches of `--batch` as the store's statements do: an
 * INSERT of the batch, a take of the oldest queued (`FOR UPDATE SKIP LOCKED`, through the
 * queue index), one ending statement for the batch (as result-writes.ts ends up to 100
 * posted results in one statement); autovacuum runs as configured by the migrations.
 * Then the cleanup as the retention sweep does it (due-rules.ts: 1 000 rows a statement,
 * each its own transaction) and two VACUUMs (a B-tree page emptied by one VACUUM is
 * handed out again only once a later one finds it safe). After the last pass, what a
 * `TRUNCATE` of each job table found empty (under `LOCK … NOWAIT`) gives back.
 * `--vacuum-every N` adds a VACUUM of the job tables (sw_jobs; and sw_ended_jobs for `split`)
 * every N jobs of a pass.
 *
 * Figures: the index sizes (pg_relation_size of each, summed per table) at the start,
 * at the peak (every job retained), after the cleanup and VACUUMs; the time of the ending
 * statements per job and of the whole pass (jobs/s). The statements are the store's
 * shapes, not the store itself: this compares layouts, not the store's client code.
 */
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { openHarnessDatabase } from '../packages/platform/src/harness/harness-database.js';
import { DUE_AT, SWEEP_BATCH } from '../packages/platform/src/harness/store/postgres/due-rules.js';
import { PostgresJobStore } from '../packages/platform/src/harness/store/postgres/postgres-job-store.js';
import { startEmbeddedServer } from '../test/postgres/embedded-server.js';
import { loadAverage, machineInfo } from './lib/machine.js';
import { median } from './lib/stats.js';

const { values } = parseArgs({
  options: {
    jobs: { type: 'string', default: '50000' },
    batch: { type: 'string', default: '64' },
    rounds: { type: 'string', default: '2' },
    passes: { type: 'string', default: '2' },
    durable: { type: 'boolean', default: false },
    'vacuum-every': { type: 'string', default: '0' },
    retain: { type: 'string', default: '0' },
  },
});
const JOBS = Number(values.jobs);
const BATCH = Number(values.batch);
const ROUNDS = Number(values.rounds);
const PASSES = Number(values.passes);
const RETENTION_MS = 1_800_000;
/**
 * A VACUUM of the layout's job tables after this many jobs of a pass (0: none, autovacuum only), as
 * the store could run itself: autovacuum looks at a table at most once a minute (`autovacuum_naptime`).
 */
const VACUUM_EVERY = Number(values['vacuum-every']);
/**
 * A steady state instead of a backlog retained to the end: with `--retain N`, every 1 000 jobs
 * the retention sweep deletes every ended job but the last N or so (as a retention of N jobs'
 * worth of time would), and the index sizes are printed every 10 000 jobs: whether they settle.
 */
const RETAIN = Number(values.retain);

type Layout = 'one-table' | 'split';

/** The VACUUM of each layout's job tables. */
const VACUUM: Record<Layout, string> = { 'one-table': 'VACUUM sw_jobs', split: 'VACUUM sw_jobs, sw_ended_jobs' };

/** Every column a job row has, in one order, for the move's INSERT … SELECT. */
const COLUMNS = [
  'endpoint_id',
  'id',
  'seq',
  'queue_seq',
  'request',
  'sync',
  'status',
  'submitted_at',
  'queued_at',
  'started_at',
  'ended_at',
  'worker_id',
  'output',
  'error',
  'retries',
  'attempt',
  'lost',
  'result_from',
  'chunk_count',
  'unread_count',
  'expires_at',
  'execution_deadline',
  'execution_timeout_ms',
  'retention_ms',
  'delete_at',
  'reported_at',
  'policy_timeout_ms',
  'cancelled_from',
] as const;

/** The columns an end changes, and their new values (`$2`: now; `m`: the row as it was). */
const ENDED_VALUES: Partial<Record<(typeof COLUMNS)[number], string>> = {
  status: "'COMPLETED'",
  ended_at: '$2::bigint',
  worker_id: 'NULL',
  output: "'1'::json",
  result_from: `json_build_object('workerId', m.worker_id, 'attempt', m.attempt)::jsonb`,
  execution_deadline: 'NULL',
  delete_at: `$2::bigint + m.retention_ms`,
};

/** The ended table of the split layout: sw_jobs's columns (no identity: the row keeps its seq), the indexes its reads need. */
const SPLIT_DDL = `
  CREATE TABLE sw_ended_jobs (LIKE sw_jobs);
  ALTER TABLE sw_ended_jobs ADD PRIMARY KEY (endpoint_id, id);
  CREATE INDEX sw_ended_jobs_newest ON sw_ended_jobs (endpoint_id, seq DESC);
  CREATE INDEX sw_ended_jobs_due ON sw_ended_jobs ((${DUE_AT}));
  ALTER TABLE sw_ended_jobs SET (autovacuum_vacuum_scale_factor = 0.02, autovacuum_vacuum_threshold = 1000,
    autovacuum_vacuum_insert_scale_factor = 0.05, autovacuum_analyze_scale_factor = 0.02);`;

function endStatement(layout: Layout): string {
  const where = `endpoint_id = 'ep' AND id = ANY($1::text[]) AND status = 'IN_PROGRESS'`;
  if (layout === 'one-table') {
    const sets = Object.entries(ENDED_VALUES).map(([column, value]) => `${column} = ${value.replaceAll('m.', 'j.')}`);
    return `UPDATE sw_jobs j SET ${sets.join(', ')} WHERE ${where.replaceAll('endpoint_id', 'j.endpoint_id')} RETURNING j.id`;
  }
  const selected = COLUMNS.map((column) => ENDED_VALUES[column] ?? `m.${column}`);
  return `WITH m AS (DELETE FROM sw_jobs WHERE ${where} RETURNING *)
    INSERT INTO sw_ended_jobs (${COLUMNS.join(', ')}) SELECT ${selected.join(', ')} FROM m RETURNING id`;
}

interface Sizes {
  readonly hot: number;
  readonly ended: number;
}

async function indexSizes(sql: postgres.Sql): Promise<Sizes> {
  const [row] = await sql<{ hot: string; ended: string | null }[]>`
    SELECT pg_indexes_size('sw_jobs') AS hot,
      (SELECT pg_indexes_size(c.oid) FROM pg_class c WHERE c.relname = 'sw_ended_jobs') AS ended`;
  return { hot: Number(row?.hot), ended: Number(row?.ended ?? 0) };
}

/** Each index of the job tables and its size, the largest first. */
async function eachIndex(sql: postgres.Sql): Promise<string> {
  const rows = await sql<{ name: string; bytes: string }[]>`
    SELECT i.relname::text AS name, pg_relation_size(i.oid) AS bytes FROM pg_index x
    JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
    WHERE t.relname IN ('sw_jobs', 'sw_ended_jobs') ORDER BY pg_relation_size(i.oid) DESC`;
  return rows.map((row) => `${row.name} ${mb(Number(row.bytes))}`).join(', ');
}

const mb = (bytes: number): string => (bytes / 1_048_576).toFixed(2);
const sizesText = (sizes: Sizes): string => `sw_jobs ${mb(sizes.hot)} + ended ${mb(sizes.ended)} = ${mb(sizes.hot + sizes.ended)} MB`;

/** One pass: JOBS jobs submitted, taken and ended in batches; answers the ending statements' ms and the pass's ms. */
async function drain(
  sql: postgres.Sql,
  layout: Layout,
  clock: { now: number },
  print: (line: string) => void,
): Promise<{ endMs: number; passMs: number; vacuumMs: number }> {
  const end = endStatement(layout);
  let endMs = 0;
  let vacuumMs = 0;
  let sinceVacuum = 0;
  const began = performance.now();
  for (let done = 0; done < JOBS; done += BATCH) {
    if (VACUUM_EVERY > 0 && (sinceVacuum += BATCH) >= VACUUM_EVERY) {
      sinceVacuum = 0;
      const vacuuming = performance.now();
      await sql.unsafe(VACUUM[layout]);
      vacuumMs += performance.now() - vacuuming;
    }
    const now = clock.now++;
    await sql`
      INSERT INTO sw_jobs (endpoint_id, id, request, sync, status, submitted_at, queued_at, expires_at, retention_ms)
      SELECT 'ep', gen_random_uuid()::text, '{"input":{}}'::json, false, 'IN_QUEUE', ${now}, ${now}, ${now + 86_400_000}, ${RETENTION_MS}
      FROM generate_series(1, ${BATCH})`;
    const taken = await sql<{ id: string }[]>`
      UPDATE sw_jobs j SET status = 'IN_PROGRESS', attempt = j.attempt + 1, worker_id = 'w1', started_at = ${now}
      FROM (SELECT ctid FROM sw_jobs WHERE endpoint_id = 'ep' AND status = 'IN_QUEUE' ORDER BY queue_seq LIMIT ${BATCH} FOR UPDATE SKIP LOCKED) t
      WHERE j.ctid = t.ctid RETURNING j.id`;
    const ids = taken.map((row) => row.id);
    const ending = performance.now();
    const ended = await sql.unsafe(end, [ids, clock.now++] as never[], { prepare: true });
    endMs += performance.now() - ending;
    if (ended.length !== ids.length) throw new Error(`${layout}: ${ended.length} of ${ids.length} jobs ended`);
    const total = done + BATCH;
    // The clock moves 2 a batch: a job ended N jobs ago ended 2N/BATCH ago.
    if (RETAIN > 0 && Math.floor(total / 1_000) > Math.floor(done / 1_000)) {
      await cleanup(sql, layout, clock.now - Math.ceil((2 * RETAIN) / BATCH) + RETENTION_MS);
    }
    if (RETAIN > 0 && Math.floor(total / 10_000) > Math.floor(done / 10_000)) print(`  ${total} jobs: ${sizesText(await indexSizes(sql))}`);
  }
  return { endMs, passMs: performance.now() - began, vacuumMs };
}

/** The retention sweep past every job's retention, SWEEP_BATCH rows a statement; answers how many went. */
async function cleanup(sql: postgres.Sql, layout: Layout, now: number): Promise<number> {
  const table = sql(layout === 'one-table' ? 'sw_jobs' : 'sw_ended_jobs');
  let deleted = 0;
  for (;;) {
    const rows = await sql`
      DELETE FROM ${table} WHERE ctid = ANY (ARRAY(
        SELECT ctid FROM ${table} WHERE ${sql.unsafe(DUE_AT)} <= ${now} AND delete_at <= ${now}
        ORDER BY ${sql.unsafe(DUE_AT)} LIMIT ${SWEEP_BATCH} FOR UPDATE SKIP LOCKED))
      RETURNING id`;
    deleted += rows.length;
    if (rows.length < SWEEP_BATCH) return deleted;
  }
}

/**
 * TRUNCATE each of `tables` that is empty, under `LOCK … NOWAIT` (one another session holds is
 * skipped, never waited for): a truncated table's indexes start again from their first page.
 * Answers the tables truncated. sw_chunks goes with sw_jobs (its foreign key): empty too once
 * sw_jobs is, every chunk being deleted with its job.
 */
async function truncateWhenEmpty(sql: postgres.Sql, tables: readonly string[]): Promise<string[]> {
  const truncated: string[] = [];
  for (const table of tables) {
    const together = table === 'sw_jobs' ? ['sw_jobs', 'sw_chunks'] : [table];
    const done = await sql.begin(async (tx) => {
      await tx`LOCK TABLE ${tx(together)} IN ACCESS EXCLUSIVE MODE NOWAIT`;
      const [row] = await tx<{ empty: boolean }[]>`SELECT NOT EXISTS (SELECT 1 FROM ${tx(table)}) AS empty`;
      if (row?.empty !== true) return false;
      await tx`TRUNCATE ${tx(together)}`;
      return true;
    });
    if (done) truncated.push(table);
  }
  return truncated;
}

interface Outcome {
  readonly layout: Layout;
  readonly lines: string[];
  readonly endUsPerJob: number[];
  readonly jobsPerSecond: number[];
  readonly afterCleanup: Sizes[];
  readonly start: Sizes;
}

async function round(url: string, admin: postgres.Sql, layout: Layout, name: string): Promise<Outcome> {
  await admin.unsafe(`CREATE DATABASE ${name}`);
  const database = await openHarnessDatabase(url.replace(/\/postgres$/, `/${name}`), { poolSize: 2 });
  // The store's migrations make the tables; the store is closed again: the bench drives the statements itself.
  await (await PostgresJobStore.open(database)).close();
  const sql = database.sql;
  if (layout === 'split') await sql.unsafe(SPLIT_DDL);
  const outcome: Outcome = { layout, lines: [], endUsPerJob: [], jobsPerSecond: [], afterCleanup: [], start: await indexSizes(sql) };
  outcome.lines.push(`${layout}: start ${sizesText(outcome.start)}`);
  const clock = { now: 1_000 };
  for (let pass = 1; pass <= PASSES; pass++) {
    const { endMs, passMs, vacuumMs } = await drain(sql, layout, clock, (line) => outcome.lines.push(line));
    outcome.endUsPerJob.push((endMs * 1000) / JOBS);
    outcome.jobsPerSecond.push(JOBS / (passMs / 1000));
    const peak = await indexSizes(sql);
    clock.now += 24 * 3_600_000;
    const deleted = await cleanup(sql, layout, clock.now);
    for (let vacuum = 0; vacuum < 2; vacuum++) await sql.unsafe(VACUUM[layout]);
    const after = await indexSizes(sql);
    outcome.afterCleanup.push(after);
    outcome.lines.push(
      `${layout} pass ${pass}: ${(JOBS / (passMs / 1000)).toFixed(0)} jobs/s, ending ${((endMs * 1000) / JOBS).toFixed(1)} µs a job${VACUUM_EVERY > 0 ? `, VACUUMs ${vacuumMs.toFixed(0)} ms` : ''} | ` +
        `peak ${sizesText(peak)} | ${deleted} deleted, 2 VACUUMs: ${sizesText(after)}, ` +
        `${((after.hot + after.ended) / (outcome.start.hot + outcome.start.ended)).toFixed(1)}x the start | load ${loadAverage()}`,
    );
    outcome.lines.push(`  each index: ${await eachIndex(sql)}`);
  }
  const truncated = await truncateWhenEmpty(sql, layout === 'split' ? ['sw_ended_jobs', 'sw_jobs'] : ['sw_jobs']);
  const after = await indexSizes(sql);
  outcome.lines.push(
    `${layout}: TRUNCATE when empty (${truncated.join(', ') || 'none empty'}): ${sizesText(after)}, ` +
      `${((after.hot + after.ended) / (outcome.start.hot + outcome.start.ended)).toFixed(1)}x the start`,
  );
  await database.close();
  await admin.unsafe(`DROP DATABASE ${name}`);
  return outcome;
}

const server = await startEmbeddedServer({ durable: values.durable });
const admin = postgres(server.url, { max: 1, onnotice: () => undefined });
try {
  const machine = machineInfo();
  console.log(
    `${JOBS} jobs a pass in batches of ${BATCH}, ${PASSES} passes, ${ROUNDS} rounds (fsync ${values.durable ? 'on' : 'off'})${VACUUM_EVERY > 0 ? `, VACUUM of the job tables every ${VACUUM_EVERY} jobs` : ''}` +
      `${RETAIN > 0 ? `, about ${RETAIN} ended jobs retained` : ''}; ` +
      `${machine.cpuModel} x${machine.nproc}, node ${machine.node}, ${machine.date}, load ${loadAverage()}`,
  );
  const outcomes: Outcome[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const order: Layout[] = r % 2 === 0 ? ['one-table', 'split'] : ['split', 'one-table'];
    for (const layout of order) {
      const outcome = await round(server.url, admin, layout, `sizes_${r}_${layout.replace('-', '_')}`);
      for (const line of outcome.lines) console.log(line);
      outcomes.push(outcome);
    }
  }
  for (const layout of ['one-table', 'split'] as const) {
    const mine = outcomes.filter((outcome) => outcome.layout === layout);
    const ratios = mine.flatMap((o) => o.afterCleanup.map((after) => (after.hot + after.ended) / (o.start.hot + o.start.ended)));
    console.log(
      `${layout}: median ending ${median(mine.flatMap((o) => o.endUsPerJob)).toFixed(1)} µs a job, ` +
        `median ${median(mine.flatMap((o) => o.jobsPerSecond)).toFixed(0)} jobs/s, ` +
        `indexes after cleanup ${Math.min(...ratios).toFixed(1)}-${Math.max(...ratios).toFixed(1)}x the start`,
    );
  }
} finally {
  await admin.end();
  await server.stop();
}
