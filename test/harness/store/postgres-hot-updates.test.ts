/**
 * The job store's churned tables (issue 33, item 4; migration 0004): a worker's presence
 * update writes no index (a HOT update), counted by PostgreSQL for the transaction that
 * makes them (pg_stat_get_xact_tuples_hot_updated), and the churned tables carry their
 * own autovacuum settings. Migration 0006: sw_jobs's indexes (fewer), a running job's
 * heartbeat update in place, on a fresh database and on one a version-5 harness left.
 */
import postgres from 'postgres';
import { afterEach, expect, it } from 'vitest';
import { HARNESS_SCHEMA } from '../../../packages/platform/src/harness/harness-database.js';
import { migrate, schemaVersions } from '../../../packages/platform/src/harness/postgres/migrate.js';
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

/** The indexes of sw_jobs since migration 0008 (0006: 8 -> 7; 0008: the three time rules' in one, 7 -> 5), and the table's fillfactor. */
const JOB_INDEXES = ['sw_jobs_due', 'sw_jobs_newest', 'sw_jobs_pkey', 'sw_jobs_queue', 'sw_jobs_running'];

async function jobIndexes(sql: postgres.Sql): Promise<{ indexes: string[]; options: string[] }> {
  const indexes = await sql<{ indexname: string }[]>`SELECT indexname FROM pg_indexes WHERE tablename = 'sw_jobs' ORDER BY 1`;
  const [table] = await sql<{ reloptions: string[] }[]>`SELECT reloptions FROM pg_class WHERE relname = 'sw_jobs'`;
  return { indexes: indexes.map((row) => row.indexname), options: table?.reloptions ?? [] };
}

it("updates a running job's reported_at (a heartbeat) in place, and takes a version-5 database's jobs on after migration 0006", async () => {
  database = await createTestDatabase();
  // The database as a harness of schema version 5 left it, with a job queued and one running.
  const raw = postgres(database.url, { max: 1, onnotice: () => undefined });
  try {
    await migrate(
      raw,
      (await schemaVersions(HARNESS_SCHEMA)).filter((step) => step.version <= 5),
    );
    await raw`INSERT INTO sw_endpoints (id) VALUES ('ep')`;
    await raw`INSERT INTO sw_jobs (endpoint_id, id, request, sync, status, submitted_at, queued_at, expires_at, retention_ms)
      VALUES ('ep', 'old-1', '{"input":1}', false, 'IN_QUEUE', 1000, 1000, 999999999, 60000), ('ep', 'old-2', '{"input":2}', false, 'IN_QUEUE', 1000, 1000, 999999999, 60000)`;
    expect((await jobIndexes(raw)).indexes).toContain('sw_jobs_state_newest');
  } finally {
    await raw.end();
  }
  const handle = await database.connect(2);
  // From version 5: 0006 (this test's), the launcher's 0007 (slot holders) and 0008 (one time-rule index) after it.
  expect(handle.applied).toEqual([6, 7, 8]);
  expect(await jobIndexes(handle.sql)).toEqual({ indexes: JOB_INDEXES, options: expect.arrayContaining(['fillfactor=85']) as unknown as string[] });
  const store = await PostgresJobStore.open(handle);
  try {
    const taken = await store.take('ep', 'w1', 2, 2_000);
    expect(taken.map((job) => job.id).sort()).toEqual(['old-1', 'old-2']);
    expect((await store.health('ep')).jobs).toMatchObject({ inProgress: 2, inQueue: 0 });
    expect(await store.unreportedJobs('ep', 'w1', 3_000)).toHaveLength(2);
    // A fresh job, written to a page under the table's fillfactor: its heartbeats' updates stay in the page.
    await store.submit('ep', { input: { n: 3 } }, { id: 'new-3' }, 2_000);
    await store.take('ep', 'w2', 1, 2_000);
    const counts = await handle.sql.begin(async (tx) => {
      // The counts before the beats too: a pooled connection's counts not yet reported (a take it ran under a
      // second ago) are in the same figures.
      const read = async (): Promise<{ updated: number; hot: number }> => {
        const [row] = await tx<{ updated: string; hot: string }[]>`
          SELECT pg_stat_get_xact_tuples_updated('sw_jobs'::regclass) AS updated, pg_stat_get_xact_tuples_hot_updated('sw_jobs'::regclass) AS hot`;
        return { updated: Number(row?.updated), hot: Number(row?.hot) };
      };
      const start = await read();
      for (let beat = 1; beat <= 3; beat++)
        await tx`UPDATE sw_jobs SET reported_at = ${2_000 + beat} WHERE endpoint_id = 'ep' AND id IN ('new-3') AND status = 'IN_PROGRESS' AND worker_id = 'w2'`;
      const end = await read();
      return { updated: end.updated - start.updated, hot: end.hot - start.hot };
    });
    expect(counts).toEqual({ updated: 3, hot: 3 });
    const done = await store.complete('ep', 'old-1', 'w1', { kind: 'output', output: 'ok' }, taken[0]?.attempt, 3_000);
    expect(done.ack).toMatchObject({ applied: true });
  } finally {
    await store.close();
  }
});

it('gives a fresh database the indexes of migrations 0006 and 0008', async () => {
  database = await createTestDatabase();
  const handle = await database.connect(1);
  expect(handle.applied).toContain(6);
  expect(await jobIndexes(handle.sql)).toEqual({ indexes: JOB_INDEXES, options: expect.arrayContaining(['fillfactor=85']) as unknown as string[] });
});
