/**
 * The maintenance round's index rebuild (issue 33; store/postgres/index-rebuild.ts) on
 * the run's embedded PostgreSQL, its bound lowered to fit a small count: after jobs went
 * through the store and the retention sweep deleted them (the connections that wrote them
 * then closed, so that their row counts are reported), sw_jobs's indexes keep their
 * pages through a VACUUM; the round rebuilds them (REINDEX INDEX CONCURRENTLY, one log
 * line each) while jobs keep flowing through the store, and they shrink. A rebuilt index
 * is far under the bound: the next round leaves it alone.
 */
import { afterEach, expect, it } from 'vitest';
import { ManualClock } from '../../../src/clock/manual-clock.js';
import { openHarnessDatabase } from '../../../packages/platform/src/harness/harness-database.js';
import type { PostgresDatabase } from '../../../packages/platform/src/harness/postgres/database.js';
import { findBloatedIndexes } from '../../../packages/platform/src/harness/store/postgres/index-rebuild.js';
import { MAINTENANCE_LIMITS, MaintenanceCheck } from '../../../packages/platform/src/harness/store/postgres/maintenance-check.js';
import { PostgresJobStore } from '../../../packages/platform/src/harness/store/postgres/postgres-job-store.js';
import { createTestDatabase, type TestDatabase } from '../../postgres/test-database.js';
import { request } from './job-store-conformance.js';

let database: TestDatabase | undefined;
let handle: PostgresDatabase | undefined;
let store: PostgresJobStore | undefined;
afterEach(async () => {
  await store?.close();
  await handle?.close();
  await database?.drop();
});

const JOBS = 3_000;
const T0 = 1_000_000;
/**
 * The store's own job-table upkeep off (postgres-job-table-vacuum.test.ts tests it): its VACUUMs
 * during the deletes counted the table while rows were still there (a CI run saw 486 live rows
 * after all 3 000 were deleted, and no index looked bloated), and its TRUNCATE of an emptied
 * table gives the indexes back without the rebuild this file is about.
 */
const NO_JOB_TABLE_UPKEEP = { jobTables: { vacuumEveryJobs: 0, truncateWhenEmpty: false } } as const;

it('rebuilds the indexes a cleanup left bloated, while jobs flow, and they shrink', async () => {
  database = await createTestDatabase();
  const { url } = database;
  const first = (handle = await openHarnessDatabase(url, { poolSize: 4 }));
  let writers: number[] = [];
  // Jobs through the store, then deleted by the retention sweep: the table empties, its indexes keep their pages.
  {
    const filling = (store = await PostgresJobStore.open(first, NO_JOB_TABLE_UPKEEP));
    const ids = await Promise.all(Array.from({ length: JOBS }, async (_, n) => (await filling.submit('ep', request({ input: { n } }), {}, T0)).id));
    const taken = [];
    for (let n = 0; n < JOBS; n += 500) taken.push(...(await filling.take('ep', 'w1', 500, T0 + 1)));
    expect(taken).toHaveLength(ids.length);
    await Promise.all(taken.map((job) => filling.complete('ep', job.id, 'w1', { kind: 'output', output: 1 }, job.attempt, T0 + 2)));
    expect((await filling.applyDue(T0 + 24 * 3_600_000)).deleted).toHaveLength(JOBS);
    writers = (await first.sql<{ pid: number }[]>`SELECT pid FROM pg_stat_activity WHERE datname = current_database()`).map((row) => row.pid);
    await filling.close();
    await first.close();
    store = undefined;
    handle = undefined;
  }
  // The check weighs an index against the table's live rows as PostgreSQL's statistics count them, and a
  // connection reports its inserts and deletes at most once a second, or when it ends: one that reported its
  // inserts after the VACUUM below would count the deleted jobs as live again. So every connection that wrote
  // them has ended (reported) before the VACUUM counts the table anew.
  const { sql } = (handle = await openHarnessDatabase(url, { poolSize: 4 }));
  for (let waited = 0; ; waited += 50) {
    const [row] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid = ANY (${writers}::int[])`;
    if (row?.n === 0) break;
    if (waited > 10_000) throw new Error(`the connections that wrote the jobs did not end in 10 s: ${JSON.stringify(writers)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await sql`VACUUM sw_jobs`;
  const opened = await PostgresJobStore.open(handle, NO_JOB_TABLE_UPKEEP);
  store = opened;
  const indexBytes = async (): Promise<number> => Number((await sql<{ n: string }[]>`SELECT pg_indexes_size('sw_jobs') AS n`)[0]?.n);
  const before = await indexBytes();
  const limits = { ...MAINTENANCE_LIMITS, intervalMs: 60_000, reindexMinBytes: 32 << 10 };
  const liveRows = async (): Promise<string> =>
    JSON.stringify(
      await sql`SELECT n_live_tup, n_dead_tup, (SELECT reltuples FROM pg_class WHERE relname = 'sw_jobs') AS reltuples FROM pg_stat_user_tables WHERE relname = 'sw_jobs'`,
    );
  expect(
    (await findBloatedIndexes(sql, limits)).map((index) => index.index),
    await liveRows(),
  ).toContain('sw_jobs_pkey');

  // Jobs keep flowing while the round runs, their whole lifecycle: each ended one is swept again at once, so that
  // the table's live rows stay few whatever the round's pace (the check weighs an index against them: about 260
  // ended jobs kept would make this one look needed again).
  let flowing = true;
  let flowed = 0;
  const flow = (async () => {
    for (let n = 0; flowing; n++) {
      await new Promise((resolve) => setTimeout(resolve, 5));
      const job = await opened.submit('ep', request({ input: { n } }), {}, T0 + 10);
      const [own] = await opened.take('ep', 'w2', 1, T0 + 11);
      expect(own?.id).toBe(job.id);
      expect((await opened.complete('ep', job.id, 'w2', { kind: 'output', output: n }, own?.attempt, T0 + 12)).ack).toMatchObject({ applied: true });
      expect((await opened.applyDue(T0 + 48 * 3_600_000)).deleted).toHaveLength(1);
      flowed++;
    }
  })();
  const lines: string[] = [];
  const errors: unknown[] = [];
  const clock = new ManualClock();
  const check = new MaintenanceCheck(
    sql,
    limits,
    (line) => lines.push(line),
    (error) => errors.push(error),
    clock,
  );
  try {
    check.start();
    clock.advance(60_000);
    await check.settled();
  } finally {
    check.close();
    flowing = false;
    await flow;
  }
  expect(errors).toEqual([]);
  const seen = `${JSON.stringify(lines)}; sw_jobs now: ${await liveRows()}; ${flowed} jobs flowed`;
  expect(
    lines.some((line) =>
      /^PostgreSQL maintenance: rebuilt index sw_jobs_pkey of sw_jobs \(REINDEX INDEX CONCURRENTLY, \d+ ms\): [\d.]+ MB -> [\d.]+ MB for \d+ live rows$/.test(
        line,
      ),
    ),
    seen,
  ).toBe(true);
  expect(flowed).toBeGreaterThan(0);
  const after = await indexBytes();
  expect(after).toBeLessThan(before / 2);
  // Rebuilt, it is far under the bound: the next round leaves it alone.
  expect(await check.rebuildIndexes()).toEqual([]);
}, 120_000);
