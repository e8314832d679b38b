/**
 * The plans of the PostgreSQL store's queries on sw_jobs on a realistic table (issue 33,
 * item 4): `npx tsx bench/store-plans.bench.ts [--jobs 50000]`. Fills a migrated database
 * with jobs as a busy endpoint holds them (most ended and retained, a queue, jobs running
 * on 100 workers, a few failed; a second endpoint), analyzes it, and prints for each
 * query shape the store runs (the take, the sweeps, the reads by id, the lists and
 * counts of the management API and dashboard) the indexes its plan reads and its time
 * (EXPLAIN ANALYZE; the statements that change rows are rolled back), then the sizes of
 * the table and each index, and what a heartbeat's update of `reported_at` does (HOT).
 * `--before`: the indexes as they were before migration 0006, for comparison.
 */
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { openHarnessDatabase } from '../packages/platform/src/harness/harness-database.js';
import { DUE_AT } from '../packages/platform/src/harness/store/postgres/due-rules.js';
import { startEmbeddedServer } from '../test/postgres/embedded-server.js';
import { loadAverage, machineInfo } from './lib/machine.js';

const { values } = parseArgs({ options: { jobs: { type: 'string', default: '50000' }, before: { type: 'boolean', default: false } } });
const JOBS = Number(values.jobs);
const NOW = 10_000_000;

/** The query shapes of the store (packages/platform/src/harness/store/postgres/*.ts), with realistic values. */
const QUERIES: ReadonlyArray<readonly [string, string]> = [
  [
    'take (claim 16)',
    `WITH picked AS (SELECT ctid FROM sw_jobs WHERE endpoint_id = 'ep' AND status = 'IN_QUEUE' ORDER BY queue_seq LIMIT 16 FOR UPDATE SKIP LOCKED)
     UPDATE sw_jobs j SET status = 'IN_PROGRESS', worker_id = 'w1', started_at = ${NOW}, execution_deadline = ${NOW + 600_000}
     WHERE j.ctid = ANY (ARRAY(SELECT ctid FROM picked)) AND j.status = 'IN_QUEUE' RETURNING j.id`,
  ],
  ['read by id', `SELECT * FROM sw_jobs WHERE endpoint_id = 'ep' AND id = 'job-00000042'`],
  ['lock by id', `SELECT * FROM sw_jobs WHERE endpoint_id = 'ep' AND id = 'job-00000042' FOR UPDATE`],
  ['next due', `SELECT min(${DUE_AT}) FROM sw_jobs`],
  [
    'timeouts batch',
    `SELECT * FROM sw_jobs WHERE ${DUE_AT} <= ${NOW} AND execution_deadline <= ${NOW} AND execution_deadline <= expires_at AND status = 'IN_PROGRESS' ORDER BY ${DUE_AT} LIMIT 500 FOR UPDATE SKIP LOCKED`,
  ],
  [
    'ttl and retention sweep',
    `DELETE FROM sw_jobs WHERE ctid = ANY (ARRAY(SELECT ctid FROM sw_jobs WHERE ${DUE_AT} <= ${NOW} AND (expires_at <= ${NOW} OR delete_at <= ${NOW})
       ORDER BY ${DUE_AT} LIMIT 1000 FOR UPDATE SKIP LOCKED)) AND (expires_at <= ${NOW} OR delete_at <= ${NOW}) RETURNING id`,
  ],
  ['list newest', `SELECT * FROM sw_jobs WHERE endpoint_id = 'ep' ORDER BY seq DESC OFFSET 0 LIMIT 20`],
  ['list oldest', `SELECT * FROM sw_jobs WHERE endpoint_id = 'ep' ORDER BY seq ASC OFFSET 0 LIMIT 20`],
  ['list total', `SELECT count(*) FROM sw_jobs WHERE endpoint_id = 'ep'`],
  ['list FAILED newest', `SELECT * FROM sw_jobs WHERE endpoint_id = 'ep' AND status IN ('FAILED') ORDER BY seq DESC OFFSET 0 LIMIT 20`],
  ['list FAILED total', `SELECT count(*) FROM sw_jobs WHERE endpoint_id = 'ep' AND status IN ('FAILED')`],
  ['list IN_QUEUE newest', `SELECT * FROM sw_jobs WHERE endpoint_id = 'ep' AND status IN ('IN_QUEUE') ORDER BY seq DESC OFFSET 0 LIMIT 20`],
  ['list IN_PROGRESS newest', `SELECT * FROM sw_jobs WHERE endpoint_id = 'ep' AND status IN ('IN_PROGRESS') ORDER BY seq DESC OFFSET 0 LIMIT 20`],
  ['list slowest', `SELECT * FROM sw_jobs WHERE endpoint_id = 'ep' ORDER BY (ended_at - started_at) DESC NULLS LAST, seq DESC OFFSET 0 LIMIT 20`],
  ['state counts', `SELECT status, count(*) FROM sw_jobs WHERE endpoint_id = 'ep' GROUP BY status`],
  [
    '/health counts',
    `SELECT (SELECT count(*) FROM sw_jobs WHERE endpoint_id = 'ep' AND status = 'IN_PROGRESS') AS in_progress,
      (SELECT count(*) FROM sw_jobs WHERE endpoint_id = 'ep' AND status = 'IN_QUEUE') AS in_queue,
      (SELECT count(*) FROM sw_workers w WHERE w.endpoint_id = 'ep' AND EXISTS (
        SELECT 1 FROM sw_jobs j WHERE j.endpoint_id = w.endpoint_id AND j.worker_id = w.id AND j.status = 'IN_PROGRESS')) AS running`,
  ],
  ["a worker's jobs", `SELECT id FROM sw_jobs WHERE endpoint_id = 'ep' AND worker_id = 'w7' AND status = 'IN_PROGRESS' ORDER BY started_at, queue_seq`],
  [
    'heartbeat reported_at',
    `UPDATE sw_jobs SET reported_at = ${NOW} WHERE endpoint_id = 'ep' AND id IN ('job-00000001', 'job-00000002') AND status = 'IN_PROGRESS' AND worker_id = 'w1'`,
  ],
];

/** The indexes before migration 0006 (0001's, 0004's table settings). */
const BEFORE_0006 = [
  'DROP INDEX sw_jobs_running',
  'ALTER TABLE sw_jobs RESET (fillfactor)',
  'CREATE INDEX sw_jobs_state_newest ON sw_jobs (endpoint_id, status, seq DESC)',
  'CREATE INDEX sw_jobs_worker ON sw_jobs (endpoint_id, worker_id) WHERE worker_id IS NOT NULL',
];

/** Fill sw_jobs as a busy endpoint holds them: 90% ended and retained, 1% failed, 6% queued, 3% running on 100 workers; 10% on a second endpoint. */
async function fill(sql: postgres.Sql): Promise<void> {
  await sql`INSERT INTO sw_endpoints (id) VALUES ('ep'), ('other')`;
  await sql`INSERT INTO sw_workers (endpoint_id, id, first_seen_at, last_seen_at, heartbeats) SELECT 'ep', 'w' || n, ${NOW}, ${NOW}, true FROM generate_series(1, 100) n`;
  await sql.unsafe(`
    INSERT INTO sw_jobs (endpoint_id, id, request, sync, status, submitted_at, queued_at, started_at, ended_at, worker_id,
      expires_at, execution_deadline, execution_timeout_ms, retention_ms, delete_at, attempt)
    SELECT CASE WHEN n % 10 = 9 THEN 'other' ELSE 'ep' END, 'job-' || lpad(n::text, 8, '0'), '{"input":{"n":1}}', false, s.status,
      ${NOW} - 100000 + n, ${NOW} - 100000 + n,
      CASE WHEN s.status = 'IN_QUEUE' THEN NULL ELSE ${NOW} - 90000 + n END,
      CASE WHEN s.status IN ('COMPLETED', 'FAILED') THEN ${NOW} - 80000 + n END,
      CASE WHEN s.status = 'IN_PROGRESS' THEN 'w' || (1 + (n / 100) % 100) END,
      ${NOW} + 86400000, CASE WHEN s.status = 'IN_PROGRESS' THEN ${NOW} + 600000 + n END, 600000, 3600000,
      CASE WHEN s.status IN ('COMPLETED', 'FAILED') THEN ${NOW} + 3600000 + n END, CASE WHEN s.status = 'IN_QUEUE' THEN 0 ELSE 1 END
    FROM generate_series(1, ${JOBS}) n,
      LATERAL (SELECT CASE WHEN n % 100 < 90 THEN 'COMPLETED' WHEN n % 100 < 91 THEN 'FAILED' WHEN n % 100 < 97 THEN 'IN_QUEUE' ELSE 'IN_PROGRESS' END AS status) s
    ORDER BY n`);
  await sql`ANALYZE sw_jobs`;
  await sql`ANALYZE sw_workers`;
}

/** The index names a plan reads, and its execution time. */
function summarize(plan: unknown): { indexes: string[]; scans: string[]; ms: number } {
  const indexes = new Set<string>();
  const scans = new Set<string>();
  const walk = (node: Record<string, unknown>): void => {
    if (typeof node['Index Name'] === 'string') indexes.add(node['Index Name']);
    if (node['Node Type'] === 'Seq Scan') scans.add(`seq scan ${String(node['Relation Name'])}`);
    if (node['Node Type'] === 'Sort') scans.add('sort');
    for (const child of (node.Plans as Record<string, unknown>[] | undefined) ?? []) walk(child);
  };
  const top = (plan as [{ Plan: Record<string, unknown>; 'Execution Time': number }])[0];
  walk(top.Plan);
  return { indexes: [...indexes], scans: [...scans], ms: top['Execution Time'] };
}

const server = await startEmbeddedServer();
const admin = postgres(server.url, { max: 1, onnotice: () => undefined });
try {
  await admin`CREATE DATABASE plans`;
  const database = await openHarnessDatabase(server.url.replace(/\/postgres$/, '/plans'), { poolSize: 1 });
  const sql = database.sql;
  const machine = machineInfo();
  console.log(
    `${JOBS} jobs; schema versions ${database.applied.join(', ')}${values.before ? ' (indexes as before 0006)' : ''}; ${machine.cpuModel} x${machine.nproc}, ${machine.date}, load ${loadAverage()}`,
  );
  if (values.before) for (const statement of BEFORE_0006) await sql.unsafe(statement);
  await fill(sql);
  console.log('query | indexes read | other | ms (EXPLAIN ANALYZE, best of 3)');
  for (const [name, text] of QUERIES) {
    let best: ReturnType<typeof summarize> | undefined;
    for (let round = 0; round < 3; round++) {
      const plan = await sql
        .begin(async (tx) => {
          const rows = await tx.unsafe(`EXPLAIN (ANALYZE, FORMAT JSON) ${text}`);
          throw Object.assign(new Error('rollback'), { plan: (rows[0] as Record<string, unknown>)['QUERY PLAN'] });
        })
        .catch((error: { plan?: unknown }) => {
          if (error.plan === undefined) throw error;
          return error.plan;
        });
      const summary = summarize(plan);
      if (!best || summary.ms < best.ms) best = summary;
    }
    console.log(`${name} | ${best?.indexes.join(', ') || '-'} | ${best?.scans.join(', ') || '-'} | ${best?.ms.toFixed(2)}`);
  }
  const sizes = await sql<{ name: string; bytes: string }[]>`
    SELECT 'sw_jobs (table)' AS name, pg_table_size('sw_jobs') AS bytes
    UNION ALL SELECT indexrelid::regclass::text, pg_relation_size(indexrelid) FROM pg_index WHERE indrelid = 'sw_jobs'::regclass`;
  console.log(sizes.map((row) => `${row.name} ${(Number(row.bytes) / 1048576).toFixed(1)} MB`).join('; '));
  const hot = await sql.begin(async (tx) => {
    await tx`UPDATE sw_jobs SET reported_at = ${NOW + 1} WHERE endpoint_id = 'ep' AND status = 'IN_PROGRESS'`;
    const [row] = await tx<{ updated: string; hot: string }[]>`
      SELECT pg_stat_get_xact_tuples_updated('sw_jobs'::regclass) AS updated, pg_stat_get_xact_tuples_hot_updated('sw_jobs'::regclass) AS hot`;
    return row;
  });
  console.log(
    `heartbeat update of every running job's reported_at: ${hot?.hot} of ${hot?.updated} HOT (pages bulk-inserted under the table's fillfactor, if any)`,
  );
  await database.close();
} finally {
  await admin.end();
  await server.stop();
}
