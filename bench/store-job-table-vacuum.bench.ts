/**
 * The job tables kept small by the store (issue 47, item 4; store/postgres/job-table-vacuum.ts),
 * through the store itself:
 *
 *   npx tsx bench/store-job-table-vacuum.bench.ts [--jobs 10000] [--batch 64] [--rounds 4] [--retain 0] [--durable]
 *
 * Two settings of the same store on one embedded PostgreSQL, a fresh database each round, in
 * alternating rounds (which goes first alternates too):
 *
 * - `base`: `jobTables: { vacuumEveryJobs: 0, truncateWhenEmpty: false }`, the store as it
 *   was before (autovacuum only);
 * - `new`: the defaults (a VACUUM of sw_jobs and sw_chunks every 1 000 jobs ended or
 *   deleted; the tables truncated when a cleanup left them empty);
 * - `truncate` (with `--modes base,new,truncate`): the truncation alone, no VACUUMs.
 *
 * A round drains `--jobs` jobs in batches of `--batch`: the batch submitted (in parallel),
 * taken by one take, completed (in parallel). With `--retain N`, every 1 000 jobs the
 * retention sweep (applyDue) deletes every ended job but the last N or so: a steady state,
 * whose table is never empty. Then the cleanup as the scheduler runs it: applyDue past every
 * job's retention, then nextDueAt, and the store's work settled (jobTablesSettled).
 *
 * Figures: the job tables' index sizes (pg_indexes_size of sw_jobs and sw_chunks) at the
 * start, at the end of the flow, after the cleanup; the take and the completion, µs a job
 * (the batch's take call, and its completions from the first sent to the last answered,
 * divided by the batch), and the submission likewise; the VACUUMs the store ran
 * (pg_stat_user_tables.vacuum_count of sw_jobs).
 */
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { openHarnessDatabase } from '../packages/platform/src/harness/harness-database.js';
import { PostgresJobStore } from '../packages/platform/src/harness/store/postgres/postgres-job-store.js';
import { startEmbeddedServer } from '../test/postgres/embedded-server.js';
import { loadAverage, machineInfo } from './lib/machine.js';
import { median } from './lib/stats.js';

const { values } = parseArgs({
  options: {
    jobs: { type: 'string', default: '10000' },
    batch: { type: 'string', default: '64' },
    rounds: { type: 'string', default: '4' },
    retain: { type: 'string', default: '0' },
    durable: { type: 'boolean', default: false },
    modes: { type: 'string', default: 'base,new' },
  },
});
const JOBS = Number(values.jobs);
const BATCH = Number(values.batch);
const ROUNDS = Number(values.rounds);
const RETAIN = Number(values.retain);
/** The jobs a round runs: whole batches. */
const TOTAL = Math.ceil(JOBS / BATCH) * BATCH;
/** A /run job's retention after its end (the store's default). */
const RETENTION_MS = 1_800_000;

type Mode = 'base' | 'new' | 'truncate';
const SETTINGS: Record<Mode, { vacuumEveryJobs?: number; truncateWhenEmpty?: boolean }> = {
  base: { vacuumEveryJobs: 0, truncateWhenEmpty: false },
  new: {},
  truncate: { vacuumEveryJobs: 0 },
};
const MODES = values.modes.split(',').map((mode) => {
  if (!(mode in SETTINGS)) throw new Error(`--modes: expected a list of ${Object.keys(SETTINGS).join(', ')}, got ${JSON.stringify(mode)}`);
  return mode as Mode;
});

interface Outcome {
  readonly mode: Mode;
  readonly start: number;
  readonly flowEnd: number;
  readonly afterCleanup: number;
  readonly submitUs: number;
  readonly takeUs: number;
  readonly completeUs: number;
  readonly vacuums: number;
}

async function indexBytes(sql: postgres.Sql): Promise<number> {
  const [row] = await sql<{ bytes: string }[]>`SELECT pg_indexes_size('sw_jobs') + pg_indexes_size('sw_chunks') AS bytes`;
  return Number(row?.bytes);
}

async function vacuumCount(sql: postgres.Sql): Promise<number> {
  const [row] = await sql<{ n: number }[]>`SELECT vacuum_count::int AS n FROM pg_stat_user_tables WHERE relname = 'sw_jobs'`;
  return row?.n ?? 0;
}

/** The jobs through the store, batch by batch; answers the ms spent in submissions, takes and completions. */
async function flow(store: PostgresJobStore, clock: { now: number }): Promise<{ submitMs: number; takeMs: number; completeMs: number }> {
  const spent = { submitMs: 0, takeMs: 0, completeMs: 0 };
  for (let done = 0; done < TOTAL; done += BATCH) {
    const now = clock.now++;
    let began = performance.now();
    await Promise.all(Array.from({ length: BATCH }, (_, n) => store.submit('ep', { input: { n: done + n } }, {}, now)));
    spent.submitMs += performance.now() - began;
    began = performance.now();
    const taken = await store.take('ep', 'w1', BATCH, now);
    spent.takeMs += performance.now() - began;
    if (taken.length !== BATCH) throw new Error(`took ${taken.length} of ${BATCH} jobs`);
    began = performance.now();
    await Promise.all(taken.map((job) => store.complete('ep', job.id, 'w1', { kind: 'output', output: 1 }, job.attempt, now)));
    spent.completeMs += performance.now() - began;
    if (RETAIN > 0 && Math.floor((done + BATCH) / 1_000) > Math.floor(done / 1_000)) {
      // Jobs ended more than RETAIN jobs ago (a batch a clock tick) are past their retention.
      await store.applyDue(now - Math.ceil(RETAIN / BATCH) + RETENTION_MS);
    }
  }
  return spent;
}

async function round(url: string, admin: postgres.Sql, mode: Mode, name: string): Promise<Outcome> {
  await admin.unsafe(`CREATE DATABASE ${name}`);
  const database = await openHarnessDatabase(url.replace(/\/postgres$/, `/${name}`), { poolSize: 4 });
  const store = await PostgresJobStore.open(database, { jobTables: SETTINGS[mode] });
  const sql = database.sql;
  const start = await indexBytes(sql);
  const clock = { now: 1_000_000 };
  const spent = await flow(store, clock);
  await store.jobTablesSettled();
  const flowEnd = await indexBytes(sql);
  // The cleanup as the scheduler runs it: the sweep past every retention, then the next deadline.
  await store.applyDue(clock.now + 24 * 3_600_000);
  await store.nextDueAt();
  await store.jobTablesSettled();
  const afterCleanup = await indexBytes(sql);
  const vacuums = await vacuumCount(sql);
  await store.close();
  await database.close();
  await admin.unsafe(`DROP DATABASE ${name}`);
  const us = (ms: number): number => (ms * 1000) / TOTAL;
  return { mode, start, flowEnd, afterCleanup, submitUs: us(spent.submitMs), takeUs: us(spent.takeMs), completeUs: us(spent.completeMs), vacuums };
}

const mb = (bytes: number): string => (bytes / 1_048_576).toFixed(2);

const server = await startEmbeddedServer({ durable: values.durable });
const admin = postgres(server.url, { max: 1, onnotice: () => undefined });
try {
  const machine = machineInfo();
  console.log(
    `${TOTAL} jobs a round in batches of ${BATCH}, ${ROUNDS} rounds a mode (fsync ${values.durable ? 'on' : 'off'})` +
      `${RETAIN > 0 ? `, about ${RETAIN} ended jobs retained` : ', every ended job retained to the cleanup'}; ` +
      `${machine.cpuModel} x${machine.nproc}, node ${machine.node}, ${machine.date}, load ${loadAverage()}`,
  );
  const outcomes: Outcome[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    // Each round starts with the next mode: each goes first as often as the others.
    const order = [...MODES.slice(r % MODES.length), ...MODES.slice(0, r % MODES.length)];
    for (const mode of order) {
      const o = await round(server.url, admin, mode, `vacuum_${r}_${mode}`);
      outcomes.push(o);
      console.log(
        `${mode.padEnd(8)} round ${r + 1}: indexes start ${mb(o.start)} MB, end of flow ${mb(o.flowEnd)} MB, after cleanup ${mb(o.afterCleanup)} MB ` +
          `(${(o.afterCleanup / o.start).toFixed(1)}x the start) | µs a job: submit ${o.submitUs.toFixed(0)}, take ${o.takeUs.toFixed(0)}, ` +
          `complete ${o.completeUs.toFixed(0)} | ${o.vacuums} VACUUMs | load ${loadAverage()}`,
      );
    }
  }
  for (const mode of MODES) {
    const mine = outcomes.filter((o) => o.mode === mode);
    const pick = (key: keyof Omit<Outcome, 'mode'>): number => median(mine.map((o) => o[key]));
    console.log(
      `${mode}: medians: end of flow ${mb(pick('flowEnd'))} MB, after cleanup ${mb(pick('afterCleanup'))} MB (${(pick('afterCleanup') / pick('start')).toFixed(1)}x); ` +
        `µs a job: submit ${pick('submitUs').toFixed(0)}, take ${pick('takeUs').toFixed(0)}, complete ${pick('completeUs').toFixed(0)}`,
    );
  }
} finally {
  await admin.end();
  await server.stop();
}
