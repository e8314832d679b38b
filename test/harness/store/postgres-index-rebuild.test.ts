/**
 * The maintenance round's index rebuild (issue 33; store/postgres/index-rebuild.ts) on
 * the run's embedded PostgreSQL, its bound lowered to fit a small count: after jobs went
 * through the store and the retention sweep deleted them, sw_jobs's indexes keep their
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

it('rebuilds the indexes a cleanup left bloated, while jobs flow, and they shrink', async () => {
  database = await createTestDatabase();
  const { sql } = (handle = await openHarnessDatabase(database.url, { poolSize: 4 }));
  const opened = await PostgresJobStore.open(handle);
  store = opened;
  // Jobs through the store, then deleted by the retention sweep: the table empties, its indexes keep their pages.
  const ids = await Promise.all(Array.from({ length: JOBS }, async (_, n) => (await opened.submit('ep', request({ input: { n } }), {}, T0)).id));
  const taken = [];
  for (let n = 0; n < JOBS; n += 500) taken.push(...(await opened.take('ep', 'w1', 500, T0 + 1)));
  expect(taken).toHaveLength(ids.length);
  await Promise.all(taken.map((job) => opened.complete('ep', job.id, 'w1', { kind: 'output', output: 1 }, job.attempt, T0 + 2)));
  expect((await opened.applyDue(T0 + 24 * 3_600_000)).deleted).toHaveLength(JOBS);
  await sql`VACUUM sw_jobs`;
  const indexBytes = async (): Promise<number> => Number((await sql<{ n: string }[]>`SELECT pg_indexes_size('sw_jobs') AS n`)[0]?.n);
  const before = await indexBytes();
  const limits = { ...MAINTENANCE_LIMITS, intervalMs: 60_000, reindexMinBytes: 32 << 10 };
  // The check weighs an index against the table's live rows as PostgreSQL's statistics count them, and each
  // connection reports its inserts and deletes at most once a second: until the pool's have, the deleted jobs
  // still count as live. Wait for the counts to settle (what the next round, a minute later, would see).
  for (let waited = 0; !(await findBloatedIndexes(sql, limits)).some((index) => index.index === 'sw_jobs_pkey'); waited += 100) {
    if (waited > 20_000) throw new Error('sw_jobs_pkey never counted as bloated: the statistics did not settle in 20 s');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }

  // Jobs keep flowing while the round runs, a few a tick: each stays (ended), and a flood of them would count as
  // live rows enough to make the index look needed again (about 260 here), whatever the round's pace.
  let flowing = true;
  let flowed = 0;
  const flow = (async () => {
    for (let n = 0; flowing; n++) {
      await new Promise((resolve) => setTimeout(resolve, 5));
      const job = await opened.submit('ep', request({ input: { n } }), {}, T0 + 10);
      const [own] = await opened.take('ep', 'w2', 1, T0 + 11);
      expect(own?.id).toBe(job.id);
      expect((await opened.complete('ep', job.id, 'w2', { kind: 'output', output: n }, own?.attempt, T0 + 12)).ack).toMatchObject({ applied: true });
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
  expect(
    lines.some((line) =>
      /^PostgreSQL maintenance: rebuilt index sw_jobs_pkey of sw_jobs \(REINDEX INDEX CONCURRENTLY, \d+ ms\): [\d.]+ MB -> [\d.]+ MB for \d+ live rows$/.test(
        line,
      ),
    ),
  ).toBe(true);
  expect(flowed).toBeGreaterThan(0);
  const after = await indexBytes();
  expect(after).toBeLessThan(before / 2);
  // Rebuilt, it is far under the bound: the next round leaves it alone.
  expect(await check.rebuildIndexes()).toEqual([]);
}, 120_000);
