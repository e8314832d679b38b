/**
 * The job tables kept small by the store (issue 47, item 4; store/postgres/job-table-vacuum.ts)
 * on the run's embedded PostgreSQL:
 *
 * - after thousands of jobs (some streamed, so sw_chunks holds rows too) and their cleanup
 *   by the retention sweep, the job tables' indexes are back within 2x of a fresh
 *   database's, with no REINDEX (the maintenance round is not running): the store
 *   truncated the tables the sweep left empty once nextDueAt found no job, as the
 *   scheduler asks after each sweep;
 * - the TRUNCATE loses nothing: a table another session holds (a submission not yet
 *   committed) is skipped, never waited for, and tried again the next time no job is
 *   found; a table with a job is left alone;
 * - the store vacuums the job tables every `vacuumEveryJobs` jobs ended or deleted, and a
 *   table that another session vacuums is skipped, never waited for.
 */
import postgres from 'postgres';
import { afterEach, expect, it } from 'vitest';
import type { PostgresDatabase } from '../../../packages/platform/src/harness/postgres/database.js';
import { truncateEmptyJobTables, vacuumJobTables } from '../../../packages/platform/src/harness/store/postgres/job-table-vacuum.js';
import { PostgresJobStore } from '../../../packages/platform/src/harness/store/postgres/postgres-job-store.js';
import { createTestDatabase, type TestDatabase } from '../../postgres/test-database.js';
import { request } from './job-store-conformance.js';

let database: TestDatabase | undefined;
let store: PostgresJobStore | undefined;
let other: postgres.Sql | undefined;
afterEach(async () => {
  await store?.close();
  await other?.end();
  await database?.drop();
  store = undefined;
  other = undefined;
  database = undefined;
});

const T0 = 1_000_000;
const DAY = 86_400_000;

/** The job tables' indexes, bytes (every index of sw_jobs and sw_chunks). */
async function jobIndexBytes(sql: postgres.Sql): Promise<number> {
  const [row] = await sql<{ bytes: string }[]>`SELECT pg_indexes_size('sw_jobs') + pg_indexes_size('sw_chunks') AS bytes`;
  return Number(row?.bytes);
}

/** `count` jobs submitted, taken and completed through `opened` (every 10th streams two chunks first), 500 at a time. */
async function runJobs(opened: PostgresJobStore, count: number, now: number): Promise<void> {
  for (let done = 0; done < count; done += 500) {
    const batch = Math.min(500, count - done);
    await Promise.all(Array.from({ length: batch }, (_, n) => opened.submit('ep', request({ input: { n: done + n } }), {}, now)));
    const taken = await opened.take('ep', 'w1', batch, now + 1);
    expect(taken).toHaveLength(batch);
    await Promise.all(
      taken.map(async (job, n) => {
        if (n % 10 === 0) for (const output of ['a', 'b']) await opened.pushChunk('ep', job.id, 'w1', { output }, job.attempt);
        const { ack } = await opened.complete('ep', job.id, 'w1', { kind: 'output', output: n }, job.attempt, now + 2);
        expect(ack).toMatchObject({ applied: true });
      }),
    );
  }
}

async function openStore(handle: PostgresDatabase, vacuumEveryJobs = 1_000): Promise<PostgresJobStore> {
  return (store = await PostgresJobStore.open(handle, { jobTables: { vacuumEveryJobs } }));
}

it('gives the indexes back after 4 000 jobs and their cleanup: within 2x of a fresh database, no REINDEX', async () => {
  database = await createTestDatabase();
  const handle = await database.connect(4);
  const opened = await openStore(handle);
  const start = await jobIndexBytes(handle.sql);
  await runJobs(opened, 4_000, T0);
  const peak = await jobIndexBytes(handle.sql);
  // The sweep as the scheduler runs it: applyDue, then nextDueAt (none: no job is left).
  expect((await opened.applyDue(T0 + DAY)).deleted).toHaveLength(4_000);
  expect(await opened.nextDueAt()).toBeUndefined();
  await opened.jobTablesSettled();
  const after = await jobIndexBytes(handle.sql);
  const seen = `start ${start} B, peak ${peak} B, after the cleanup ${after} B`;
  expect(peak, seen).toBeGreaterThan(8 * start);
  expect(after, seen).toBeLessThanOrEqual(2 * start);
  // The store goes on as before on the truncated tables: a job flows, its chunks kept in order.
  const job = await opened.submit('ep', request({ input: { after: true } }), {}, T0 + DAY);
  const [taken] = await opened.take('ep', 'w1', 1, T0 + DAY);
  expect(taken?.id).toBe(job.id);
  await opened.pushChunk('ep', job.id, 'w1', { output: 'x' }, taken?.attempt);
  await opened.complete('ep', job.id, 'w1', { kind: 'output', output: 'done' }, taken?.attempt, T0 + DAY);
  expect(await opened.get('ep', job.id)).toMatchObject({ status: 'COMPLETED', output: 'done' });
}, 120_000);

it('truncates nothing another session holds or that holds a job, and tries again once the table is free', async () => {
  database = await createTestDatabase();
  const handle = await database.connect(4);
  const opened = await openStore(handle);
  await runJobs(opened, 100, T0);
  other = postgres(database.url, { max: 1, onnotice: () => undefined });
  const otherSql = other;
  // A submission of another session, not yet committed, when the sweep has emptied the table.
  let commit: () => void = () => undefined;
  const committed = new Promise<void>((resolve) => (commit = resolve));
  let inserted: () => void = () => undefined;
  const insertedOnce = new Promise<void>((resolve) => (inserted = resolve));
  const pending = otherSql.begin(async (tx) => {
    await tx`
      INSERT INTO sw_jobs (endpoint_id, id, request, sync, status, submitted_at, queued_at, expires_at, retention_ms)
      VALUES ('ep', 'held-job', '{"input":{}}'::json, false, 'IN_QUEUE', ${T0}, ${T0}, ${T0 + 10 * DAY}, 1800000)`;
    inserted();
    await committed;
  });
  await insertedOnce;
  expect((await opened.applyDue(T0 + DAY)).deleted).toHaveLength(100);
  expect(await opened.nextDueAt()).toBeUndefined();
  await opened.jobTablesSettled();
  expect(await truncateEmptyJobTables(handle.sql)).toBe('held');
  commit();
  await pending;
  // Committed: the table is not empty, and stays as it is.
  expect(await truncateEmptyJobTables(handle.sql)).toBe('not-empty');
  expect(await opened.get('ep', 'held-job')).toMatchObject({ id: 'held-job', status: 'IN_QUEUE' });
  // Once another session deleted it, the store tries again (its last try found the table held) and truncates.
  await otherSql`DELETE FROM sw_jobs WHERE id = 'held-job'`;
  const before = await jobIndexBytes(handle.sql);
  expect(await opened.nextDueAt()).toBeUndefined();
  await opened.jobTablesSettled();
  const after = await jobIndexBytes(handle.sql);
  expect(after, `${before} B -> ${after} B`).toBeLessThan(before);
}, 60_000);

it('vacuums the job tables every vacuumEveryJobs jobs, skipping a table another session vacuums', async () => {
  database = await createTestDatabase();
  const handle = await database.connect(4);
  const opened = await openStore(handle, 200);
  const vacuums = async (): Promise<number> => {
    const [row] = await handle.sql<{ n: number }[]>`SELECT vacuum_count::int AS n FROM pg_stat_user_tables WHERE relname = 'sw_jobs'`;
    return row?.n ?? 0;
  };
  expect(await vacuums()).toBe(0);
  // 1 000 jobs ended, then 1 000 deleted: 10 times 200.
  await runJobs(opened, 1_000, T0);
  expect((await opened.applyDue(T0 + DAY)).deleted).toHaveLength(1_000);
  await opened.jobTablesSettled();
  expect(await vacuums()).toBeGreaterThanOrEqual(2);
  // Another session's VACUUM holds the table (its lock, SHARE UPDATE EXCLUSIVE): skipped, not waited for.
  other = postgres(database.url, { max: 1, onnotice: () => undefined });
  let release: () => void = () => undefined;
  const released = new Promise<void>((resolve) => (release = resolve));
  let locked: () => void = () => undefined;
  const lockedOnce = new Promise<void>((resolve) => (locked = resolve));
  const holding = other.begin(async (tx) => {
    await tx`LOCK TABLE sw_jobs, sw_chunks IN SHARE UPDATE EXCLUSIVE MODE`;
    locked();
    await released;
  });
  await lockedOnce;
  const count = await vacuums();
  await vacuumJobTables(handle.sql);
  expect(await vacuums()).toBe(count);
  release();
  await holding;
  await vacuumJobTables(handle.sql);
  expect(await vacuums()).toBe(count + 1);
}, 60_000);
