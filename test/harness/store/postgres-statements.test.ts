/**
 * Statements per job on the PostgreSQL store's happy path (issue 26): submit, take and a
 * result, counted on the wire (test/postgres/statement-counter.ts). At most 4 a job;
 * a count, not a timing. The events to other processes go in the submission, claim and
 * result statements themselves (statement-notices.ts, issue 47 item 5: before, each was
 * followed by a notification-only statement), and only while another harness listens
 * (peers.ts: these tests open one): the counter counts them as statements calling pg_notify.
 * Submissions made together go in one statement, and so do results. Through the harness, a
 * /runsync waiter adds no read.
 */
import { afterEach, expect, it } from 'vitest';
import { Harness, ManualClock, MemoryJobStore } from '../../../src/harness/index.js';
import { openHarnessDatabase } from '../../../packages/platform/src/harness/harness-database.js';
import type { PostgresDatabase } from '../../../packages/platform/src/harness/postgres/database.js';
import { PostgresJobStore } from '../../../packages/platform/src/harness/store/postgres/postgres-job-store.js';
import { ResultWrites } from '../../../packages/platform/src/harness/store/postgres/result-writes.js';
import { completeChange } from '../../../src/harness/store/job-rules.js';
import type { StoredJob } from '../../../src/harness/store/job-store.js';
import { startStatementCounter, type StatementCounter } from '../../postgres/statement-counter.js';
import { eventually } from '../../kit/index.js';
import { sleep } from '../../../src/clock/index.js';
import { createTestDatabase, type TestDatabase } from '../../postgres/test-database.js';

const JOBS = 20;
/**
 * No 'beat' while a test runs, however slow the machine (a beat is a notification statement); every hot
 * statement notifies for itself (no window: with one, a slow machine's pause between statements sends held
 * events in an outbox statement, postgres-notice-window.test.ts).
 */
const QUIET_PEERS = { peerTimes: { beatMs: 3_600_000, silentMs: 7_200_000, noticeWindowMs: 0 } };

/**
 * Another harness listening on the database (not counted): a store alone sends no event
 * notifications (peers.ts). Resolves once the counted store has answered its hello.
 */
async function listeningPeer(url: string, counted: StatementCounter): Promise<void> {
  const before = counted.notifications();
  const peerHandle = await openHarnessDatabase(url, { poolSize: 1 });
  peer = { handle: peerHandle, store: await PostgresJobStore.open(peerHandle, QUIET_PEERS) };
  await eventually(() => expect(counted.notifications()).toBeGreaterThan(before));
  // The peer's 'here' in answer makes the counted store read its endpoints (a resync): let it pass before counting.
  await sleep(500);
}
const MAX_STATEMENTS_PER_JOB = 4;

let database: TestDatabase | undefined;
let counter: StatementCounter | undefined;
let store: PostgresJobStore | undefined;
let handle: PostgresDatabase | undefined;
let peer: { store: PostgresJobStore; handle: PostgresDatabase } | undefined;
afterEach(async () => {
  await store?.close();
  await handle?.close();
  await peer?.store.close();
  await peer?.handle.close();
  peer = undefined;
  await counter?.close();
  await database?.drop();
});

it(`runs a job (submit, take, result) in at most ${MAX_STATEMENTS_PER_JOB} statements`, async () => {
  database = await createTestDatabase();
  counter = await startStatementCounter(database.url);
  handle = await openHarnessDatabase(counter.url, { poolSize: 2 });
  store = await PostgresJobStore.open(handle, QUIET_PEERS);
  await listeningPeer(database.url, counter);
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
  const perJob = (counter.count() - before) / JOBS;
  const notifying = counter.notifications() - beforeNotifications;
  await store.close();
  expect(perJob).toBeLessThanOrEqual(MAX_STATEMENTS_PER_JOB);
  // Today: one each (submit, take, complete in one compare-and-set statement), each notifying the peer itself.
  expect(perJob).toBe(3);
  expect(notifying).toBe(3 * JOBS);
  store = await PostgresJobStore.open(handle);
  expect((await store.health('ep')).jobs.completed).toBe(JOBS);
});

it('joins submissions made together in one statement, results too, each statement carrying its events', async () => {
  database = await createTestDatabase();
  counter = await startStatementCounter(database.url);
  handle = await openHarnessDatabase(counter.url, { poolSize: 2 });
  store = await PostgresJobStore.open(handle, QUIET_PEERS);
  await listeningPeer(database.url, counter);
  await store.createEndpoint('ep');
  const open = store;
  const before = counter.count();
  const beforeNotifications = counter.notifications();
  // In one turn of the event loop: they go together.
  const jobs = await Promise.all(Array.from({ length: JOBS }, (_, n) => open.submit('ep', { input: { n } }, {}, 1_000 + n)));
  expect(counter.count() - before).toBe(1);
  expect(counter.notifications() - beforeNotifications).toBe(1);
  // In submission order: the queue's order is the order of the calls.
  const taken = await store.take('ep', 'w1', JOBS, 2_000);
  expect(taken.map((job) => job.id)).toEqual(jobs.map((job) => job.id));
  expect(taken.map((job) => job.input)).toEqual(jobs.map((_, n) => ({ n })));
  // Results posted together: the same.
  const beforeResults = counter.count();
  const done = await Promise.all(taken.map((job) => open.complete('ep', job.id, 'w1', { kind: 'output', output: job.input }, job.attempt, 3_000)));
  expect(counter.count() - beforeResults).toBe(1);
  expect(done.map((outcome) => outcome.ack)).toEqual(jobs.map(() => ({ applied: true, status: 'COMPLETED' })));
  expect(done.map((outcome) => outcome.ended[0]?.output)).toEqual(jobs.map((_, n) => ({ n })));
  // 20 submits, 1 take, 20 results: 41 changes in 3 statements, each carrying its events.
  expect(counter.notifications() - beforeNotifications).toBe(3);
  await store.close();
  store = await PostgresJobStore.open(handle);
  expect((await store.health('ep')).jobs.completed).toBe(JOBS);
});

it("waits for a /runsync job's end without reading it: from the submit to the result applied in the same process", async () => {
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

it('writes a job named twice in one joint statement once: the second post is judged as the memory store judges it', async () => {
  database = await createTestDatabase();
  handle = await openHarnessDatabase(database.url, { poolSize: 2 });
  store = await PostgresJobStore.open(handle);
  const memory = new MemoryJobStore();
  const answers: unknown[][] = [];
  for (const tried of [store, memory]) {
    const [first, second] = [await tried.submit('ep', { input: { n: 1 } }, {}, 1_000), await tried.submit('ep', { input: { n: 2 } }, {}, 1_000)];
    const [a, b] = await tried.take('ep', 'w1', 2, 1_100);
    expect([a?.id, b?.id]).toEqual([first.id, second.id]);
    // Posted in one turn: the first two go together; the third (the first job again) finds its facts taken and is judged on the row.
    const posts = await Promise.all([
      tried.complete('ep', second.id, 'w1', { kind: 'output', output: 'b' }, b?.attempt, 1_200),
      tried.complete('ep', first.id, 'w1', { kind: 'output', output: 'a' }, a?.attempt, 1_200),
      tried.complete('ep', first.id, 'w1', { kind: 'output', output: 'a' }, a?.attempt, 1_200),
    ]);
    answers.push([...posts.map((post) => post.ack), (await tried.get('ep', first.id))?.output, (await tried.health('ep')).jobs.completed]);
  }
  expect(answers[0]).toEqual(answers[1]);
  expect(answers[0]?.slice(0, 2)).toEqual([
    { applied: true, status: 'COMPLETED' },
    { applied: true, status: 'COMPLETED' },
  ]);
  expect(answers[0]?.slice(3)).toEqual(['a', 2]);
  await memory.close();
});

it('answers "changed since" to the second write of a job named twice in one joint statement, and writes the first', async () => {
  database = await createTestDatabase();
  handle = await openHarnessDatabase(database.url, { poolSize: 2 });
  store = await PostgresJobStore.open(handle);
  const [first, second] = [await store.submit('ep', { input: { n: 1 } }, {}, 1_000), await store.submit('ep', { input: { n: 2 } }, {}, 1_000)];
  await store.take('ep', 'w1', 2, 1_100);
  const facts = async (id: string): Promise<StoredJob> => (await store?.get('ep', id)) as StoredJob;
  const [factsA, factsB] = [await facts(first.id), await facts(second.id)];
  const writes = new ResultWrites(handle.sql);
  // Made in one turn: the three go together, naming the first job twice.
  const written = await Promise.all([
    writes.write(factsB, completeChange(factsB, 'w1', { kind: 'output', output: 'b' }, 1_200)),
    writes.write(factsA, completeChange(factsA, 'w1', { kind: 'output', output: 'a1' }, 1_200)),
    writes.write(factsA, completeChange(factsA, 'w1', { kind: 'output', output: 'a2' }, 1_200)),
  ]);
  expect(written.map((job) => job && [job.id, job.status, job.output])).toEqual([[second.id, 'COMPLETED', 'b'], [first.id, 'COMPLETED', 'a1'], undefined]);
  expect((await store.get('ep', first.id))?.output).toBe('a1');
  expect((await store.health('ep')).jobs.completed).toBe(2);
});
