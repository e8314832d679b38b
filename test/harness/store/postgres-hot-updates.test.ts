/**
 * The job store's churned tables (issue 33, item 4; migration 0004): a worker's presence
 * update writes no index (a HOT update), counted by PostgreSQL for the transaction that
 * makes them (pg_stat_get_xact_tuples_hot_updated), and the churned tables carry their
 * own autovacuum settings.
 */
import { afterEach, expect, it } from 'vitest';
import { PostgresJobStore } from '../../../packages/platform/src/harness/store/postgres/postgres-job-store.js';
import { createTestDatabase, type TestDatabase } from '../../postgres/test-database.js';

let database: TestDatabase | undefined;
afterEach(async () => {
  await database?.drop();
  database = undefined;
});

it('updates worker presence in place (HOT) and vacuums the churned tables by their own settings', async () => {
  database = await createTestDatabase();
  const handle = await database.connect(2);
  const store = await PostgresJobStore.open(handle);
  try {
    for (let n = 0; n < 16; n++) await store.touchWorker('ep', `w${n}`, { heartbeats: true }, 1_000);
    const counts = await handle.sql.begin(async (tx) => {
      // The presence writes a take and a heartbeat make: last_seen_at, initializing.
      for (let round = 1; round <= 2; round++) await tx`UPDATE sw_workers SET last_seen_at = ${1_000 + round}, initializing = false WHERE endpoint_id = 'ep'`;
      const [row] = await tx<{ updated: string; hot: string }[]>`
        SELECT pg_stat_get_xact_tuples_updated('sw_workers'::regclass) AS updated, pg_stat_get_xact_tuples_hot_updated('sw_workers'::regclass) AS hot`;
      return { updated: Number(row?.updated), hot: Number(row?.hot) };
    });
    expect(counts.updated).toBe(32);
    // All in place (before: none, the last_seen_at index forbade it). Two rounds: the row versions fit the page's room.
    expect(counts.hot).toBe(counts.updated);
    const options = await handle.sql<{ relname: string; reloptions: string[] }[]>`
      SELECT relname, reloptions FROM pg_class WHERE relname IN ('sw_jobs', 'sw_workers', 'sw_counters', 'sw_chunks') ORDER BY relname`;
    expect(Object.fromEntries(options.map((row) => [row.relname, row.reloptions]))).toMatchObject({
      sw_jobs: expect.arrayContaining(['autovacuum_vacuum_scale_factor=0.02']),
      sw_workers: expect.arrayContaining(['fillfactor=70']),
      sw_counters: expect.arrayContaining(['fillfactor=50']),
      sw_chunks: expect.arrayContaining(['autovacuum_vacuum_scale_factor=0.05']),
    });
    // The liveness sweep still finds silent workers without its index.
    expect((await store.sweepSilentWorkers(2_000, { maxRequeues: 2 }, 2_000)).map((gone) => gone.workerId).sort()).toHaveLength(16);
  } finally {
    await store.close();
  }
});
