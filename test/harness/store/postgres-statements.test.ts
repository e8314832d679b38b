/**
 * Statements per job on the PostgreSQL store's happy path (issue 26): submit, take and a
 * result, counted on the wire (test/postgres/statement-counter.ts). At most 4 a job;
 * a count, not a timing. The events to other processes go after each commit, in
 * notification-only statements (notification-outbox.ts), counted apart: at most one per
 * change, fewer when changes come together. Submissions made together go in one
 * statement. Through the harness, a /runsync waiter adds no read.
 */
import { afterEach, expect, it } from 'vitest';
import { Harness, ManualClock } from '../../../src/harness/index.js';
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
  const beforeNotifications = counter.notifications();
  for (let n = 0; n < JOBS; n++) {
    const job = await store.submit('ep', { input: { n } }, {}, 1_000 + n);
    const [taken] = await store.take('ep', 'w1', 1, 1_000 + n);
    expect(taken?.id).toBe(job.id);
    const done = await store.complete('ep', job.id, 'w1', { kind: 'output', output: { n } }, taken?.attempt, 1_001 + n);
    expect(done.ack).toEqual({ applied: true, status: 'COMPLETED' });
  }
  const perJob = (counter.count() - before - (counter.notifications() - beforeNotifications)) / JOBS;
  await store.close(); // sends what the outbox still holds
  const notifications = counter.notifications() - beforeNotifications;
  expect(perJob).toBeLessThanOrEqual(MAX_STATEMENTS_PER_JOB);
  // Today: one each (submit, take, complete in one compare-and-set statement).
  expect(perJob).toBe(3);
  // The events of the 3 changes a job: one notification statement each at most (one at a time: nothing to join).
  expect(notifications).toBeGreaterThan(0);
  expect(notifications).toBeLessThanOrEqual(3 * JOBS);
  store = await PostgresJobStore.open(handle);
  expect((await store.health('ep')).jobs.completed).toBe(JOBS);
});

it('joins submissions made together in one statement, and their events in fewer notifications than changes', async () => {
  database = await createTestDatabase();
  counter = await startStatementCounter(database.url);
  handle = await openHarnessDatabase(counter.url, { poolSize: 2 });
  store = await PostgresJobStore.open(handle);
  await store.createEndpoint('ep');
  const open = store;
  const before = counter.count();
  const beforeNotifications = counter.notifications();
  // In one tick: the first goes at once, the others wait for it and go together.
  const jobs = await Promise.all(Array.from({ length: JOBS }, (_, n) => open.submit('ep', { input: { n } }, {}, 1_000 + n)));
  expect(counter.count() - before - (counter.notifications() - beforeNotifications)).toBe(2);
  // In submission order: the queue's order is the order of the calls.
  const taken = await store.take('ep', 'w1', JOBS, 2_000);
  expect(taken.map((job) => job.id)).toEqual(jobs.map((job) => job.id));
  expect(taken.map((job) => job.input)).toEqual(jobs.map((_, n) => ({ n })));
  const done = await Promise.all(taken.map((job) => open.complete('ep', job.id, 'w1', { kind: 'output', output: job.input }, job.attempt, 3_000)));
  expect(done.every((outcome) => outcome.ack.applied)).toBe(true);
  await store.close();
  // 20 submits, 1 take, 20 results: 41 changes; their events joined.
  const notifications = counter.notifications() - beforeNotifications;
  expect(notifications).toBeGreaterThan(0);
  expect(notifications).toBeLessThan(2 * JOBS + 1);
  store = await PostgresJobStore.open(handle);
  expect((await store.health('ep')).jobs.completed).toBe(JOBS);
});

it('waits for a /runsync job\'s end without reading it: from the submit to the result applied in the same process', async () => {
  database = await createTestDatabase();
  counter = await startStatementCounter(database.url);
  // One connection: a second one opening while statements are counted would add its own start-up queries.
  handle = await openHarnessDatabase(counter.url, { poolSize: 1 });
  store = await PostgresJobStore.open(handle);
  await store.createEndpoint('ep');
  let reads = 0;
  const counted = store;
  const watched = new Proxy(counted, {
    get(target, key) {
      if (key === 'get') return (...args: Parameters<PostgresJobStore['get']>) => (reads++, target.get(...args));
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
  // A ManualClock: no poll or sweep timer fires while the statements are counted.
  const harness = new Harness({ clock: new ManualClock(), store: watched });
  const endpoint = harness.endpoint('ep');
  // The first job is not counted: the harness's start-up (the scheduler's first question, the worker's first take) falls in it.
  let before = 0;
  let beforeNotifications = 0;
  for (let n = 0; n <= JOBS; n++) {
    if (n === 1) {
      before = counter.count();
      beforeNotifications = counter.notifications();
    }
    const queued = new Promise<void>((resolve) => {
      const unsubscribe = watched.subscribe((event) => {
        if (event.type !== 'queued') return;
        unsubscribe();
        resolve();
      });
    });
    const ended = endpoint.submitAndWait({ input: { n } }, { sync: true }, 60_000);
    await queued;
    const [job] = await endpoint.tryTake('w1', 1);
    expect(await endpoint.complete(job?.id ?? '', 'w1', { kind: 'output', output: { n } }, job?.attempt)).toEqual({ applied: true, status: 'COMPLETED' });
    expect(await ended).toMatchObject({ id: job?.id, status: 'COMPLETED', output: { n } });
  }
  expect(reads).toBe(0);
  // Submit, take, result: the waiter adds none (the events to other processes counted apart).
  expect((counter.count() - before - (counter.notifications() - beforeNotifications)) / JOBS).toBe(3);
  await harness.close();
});
