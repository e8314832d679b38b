/**
 * Statements per job on the PostgreSQL store's happy path (issue 26): submit, take and a
 * result, counted on the wire (test/postgres/statement-counter.ts). At most 4 a job;
 * a count, not a timing.
 */
import { afterEach, expect, it } from 'vitest';
import { openHarnessDatabase } from '../../../src/harness/harness-database.js';
import type { PostgresDatabase } from '../../../src/harness/postgres/database.js';
import { PostgresJobStore } from '../../../src/harness/store/postgres/postgres-job-store.js';
import { startStatementCounter, type StatementCounter } from '../../postgres/statement-counter.js';
import { createTestDatabase, type TestDatabase } from '../../postgres/test-database.js';

const JOBS = 20;
const MAX_STATEMENTS_PER_JOB = 4;

let database: TestDatabase | undefined;
let counter: StatementCounter | undefined;
let store: PostgresJobStore | undefined;
let handle: PostgresDatabase | undefined;
afterEach(async () => {
  await store?.close();
  await handle?.close();
  await counter?.close();
  await database?.drop();
});

it(`runs a job (submit, take, result) in at most ${MAX_STATEMENTS_PER_JOB} statements`, async () => {
  database = await createTestDatabase();
  counter = await startStatementCounter(database.url);
  handle = await openHarnessDatabase(counter.url, { poolSize: 2 });
  store = await PostgresJobStore.open(handle);
  await store.createEndpoint('ep');
  const before = counter.count();
  for (let n = 0; n < JOBS; n++) {
    const job = await store.submit('ep', { input: { n } }, {}, 1_000 + n);
    const [taken] = await store.take('ep', 'w1', 1, 1_000 + n);
    expect(taken?.id).toBe(job.id);
    const done = await store.complete('ep', job.id, 'w1', { kind: 'output', output: { n } }, taken?.attempt, 1_001 + n);
    expect(done.ack).toEqual({ applied: true, status: 'COMPLETED' });
  }
  const perJob = (counter.count() - before) / JOBS;
  expect(perJob).toBeLessThanOrEqual(MAX_STATEMENTS_PER_JOB);
  // Today: one each (submit, take, complete in one compare-and-set statement).
  expect(perJob).toBe(3);
  expect((await store.health('ep')).jobs.completed).toBe(JOBS);
});
