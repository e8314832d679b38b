/**
 * Two Harness objects on one job store, as two harness processes on one database: what
 * one decides is reported and waited for by the right one. Each case runs on the
 * in-memory store (one store object shared by both) and on PostgreSQL (one store per
 * harness on a fresh database of the run's embedded server).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Harness, ManualClock, MemoryJobStore, type JobStore } from '../../../src/harness/index.js';
import { WebhookSender, bindWebhooks } from '../../../packages/platform/src/harness/webhooks/index.js';
import { PostgresJobStore } from '../../../packages/platform/src/harness/store/postgres/postgres-job-store.js';
import { parseJobRequest } from '../../../src/job/index.js';
import { sleep } from '../../../src/clock/index.js';
import { eventually, startReceiver, waitFor } from '../../kit/index.js';
import { createTestDatabase } from '../../postgres/test-database.js';

const T = Date.UTC(2026, 0, 1);

interface Pair {
  readonly a: Harness;
  readonly b: Harness;
  /** Each harness's clock (ManualClocks at T, moved only by the test). */
  readonly clockA: ManualClock;
  readonly clockB: ManualClock;
}

const opened: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of opened.splice(0).reverse()) await close();
});

const kinds: Record<string, () => Promise<[JobStore, JobStore]>> = {
  memory: async () => {
    const store = new MemoryJobStore();
    return [store, store];
  },
  postgres: async () => {
    const database = await createTestDatabase();
    opened.push(() => database.drop());
    return [await PostgresJobStore.open(await database.connect(3)), await PostgresJobStore.open(await database.connect(3))];
  },
};

async function pair(kind: string, options: { maxRequeues?: number } = {}): Promise<Pair> {
  const [storeA, storeB] = await (kinds[kind] as () => Promise<[JobStore, JobStore]>)();
  const clockA = new ManualClock(T);
  const clockB = new ManualClock(T);
  const a = new Harness({ clock: clockA, store: storeA, ...options });
  const b = new Harness({ clock: clockB, store: storeB, ...options });
  opened.push(async () => {
    await a.close();
    await b.close();
  });
  return { a, b, clockA, clockB };
}

describe.each(['memory', 'postgres'])('two harnesses on one %s store', (kind) => {
  it('the one that never served the endpoint applies a timeout: the webhook is sent once, by it', async () => {
    const { a, b, clockB } = await pair(kind);
    const receiver = await startReceiver(() => 200);
    opened.push(() => receiver.close());
    const senders = [new WebhookSender({ settings: { retryDelayMs: 10 } }), new WebhookSender({ settings: { retryDelayMs: 10 } })];
    const sent = { a: 0, b: 0 };
    const unbind = [
      bindWebhooks(a, senders[0] as WebhookSender),
      bindWebhooks(b, senders[1] as WebhookSender),
      a.onEndpoint((endpoint) => endpoint.jobEnded.add(() => sent.a++)),
      b.onEndpoint((endpoint) => endpoint.jobEnded.add(() => sent.b++)),
    ];
    opened.push(async () => {
      for (const dispose of unbind) dispose();
      for (const sender of senders) sender.close();
    });
    const endpoint = a.endpoint('ep');
    const { id } = await endpoint.submit(parseJobRequest({ input: {}, webhook: receiver.url, policy: { executionTimeout: 5_000 } }));
    expect(await endpoint.tryTake('w1', 1)).toHaveLength(1);
    expect(b.findEndpoint('ep')).toBeUndefined();
    // A's clock stands still: only B's scheduler can apply the timeout. A shared store's
    // scheduler learns the deadline asynchronously, so time moves a second per look.
    await eventually(async () => {
      clockB.advance(1_000);
      expect(await endpoint.find(id)).toMatchObject({ status: 'TIMED_OUT' });
    });
    await waitFor(() => receiver.received.length > 0, 'the webhook arrives', 5_000, 10);
    // A second post would come within moments of the first: look again after a while.
    await sleep(300);
    expect(receiver.received.map((hook) => hook.body)).toEqual([expect.objectContaining({ id, status: 'TIMED_OUT' })]);
    expect(sent).toEqual({ a: 0, b: 1 });
    console.log(
      `[harness-sharing ${kind}] timeout applied by the harness that never served the endpoint: ${receiver.received.length} webhook(s), jobEnded A ${sent.a}, B ${sent.b}`,
    );
  });

  it("a drain waits for the jobs of workers that took them through this harness, not for the other's", async () => {
    const { a, b } = await pair(kind);
    const here = a.endpoint('ep');
    const there = b.endpoint('ep');
    const mine = await here.submit(parseJobRequest({ input: { mine: true } }));
    expect((await here.tryTake('w-a', 1)).map((job) => job.id)).toEqual([mine.id]);
    const theirs = await here.submit(parseJobRequest({ input: { mine: false } }));
    expect((await there.tryTake('w-b', 1)).map((job) => job.id)).toEqual([theirs.id]);
    const queued = await here.submit(parseJobRequest({ input: {} }));
    const drained = a.drain(20_000);
    await here.complete(mine.id, 'w-a', { kind: 'output', output: 'done' });
    expect(await drained).toEqual({ running: 0, queued: 1 });
    expect(await there.find(theirs.id)).toMatchObject({ status: 'IN_PROGRESS', workerId: 'w-b' });
    // The other harness still hands out the queued job; this one does not.
    expect(await here.tryTake('w-a', 1)).toEqual([]);
    expect((await there.tryTake('w-b', 1)).map((job) => job.id)).toEqual([queued.id]);
  });
});

describe('a job taken for a long poll that gave up meanwhile', () => {
  it('goes back to the queue as if never taken: not counted as lost, never failed with SW_REQUEUE_LIMIT', async () => {
    const store = new MemoryJobStore();
    let gate: Promise<void> | undefined;
    // The store answers a take only once the test opens the gate (a shared store is slower).
    const slow = new Proxy(store, {
      get(target, key, receiver) {
        if (key === 'take')
          return async (...args: Parameters<JobStore['take']>) => {
            await gate;
            return target.take(...args);
          };
        const value: unknown = Reflect.get(target, key, receiver);
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
    const harness = new Harness({ store: slow, maxRequeues: 0 });
    opened.push(() => harness.close());
    const endpoint = harness.endpoint('ep');
    const poll = new AbortController();
    const waiting = endpoint.take('w1', 1, poll.signal);
    // Let the first look (nothing queued) answer, so that the poll is parked.
    for (let i = 0; i < 20; i++) await Promise.resolve();
    let open: () => void = () => undefined;
    gate = new Promise<void>((resolve) => (open = resolve));
    const { id } = await endpoint.submit(parseJobRequest({ input: {} }));
    poll.abort();
    expect(await waiting).toEqual([]);
    open();
    await eventually(async () => expect(await endpoint.find(id)).toMatchObject({ status: 'IN_QUEUE', attempt: 0, retries: 0, lost: 0 }));
    expect((await endpoint.health()).jobs).toMatchObject({ retried: 0, failed: 0, inQueue: 1 });
    expect(await endpoint.tryTake('w2', 1)).toEqual([{ id, input: {}, attempt: 1 }]);
  });
});

describe('a /runsync wait in one harness for a result applied by the other (PostgreSQL)', () => {
  it('answers from the notification when the ended job is small, and reads the job once when it is not', async () => {
    const database = await createTestDatabase();
    opened.push(() => database.drop());
    const storeA = await PostgresJobStore.open(await database.connect(3));
    await storeA.createEndpoint('ep');
    const storeB = await PostgresJobStore.open(await database.connect(3));
    // Once A has answered B's hello (peers.ts: B reads again then): from here on A notifies B.
    await new Promise<void>((resolve) => {
      const unsubscribe = storeB.subscribe((event) => {
        if (event.type !== 'resync') return;
        unsubscribe();
        resolve();
      });
    });
    let readsB = 0;
    const watchedB = new Proxy(storeB, {
      get(target, key) {
        if (key === 'get') return (...args: Parameters<JobStore['get']>) => (readsB++, target.get(...args));
        const value: unknown = Reflect.get(target, key, target);
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
    const a = new Harness({ clock: new ManualClock(T), store: storeA });
    const b = new Harness({ clock: new ManualClock(T), store: watchedB });
    opened.push(async () => {
      await a.close();
      await b.close();
    });
    for (const [n, output] of [
      [1, { small: 'x'.repeat(100) }],
      [2, { large: 'x'.repeat(10_000) }],
    ] as const) {
      const waiting = b.endpoint('ep').submitAndWait(parseJobRequest({ input: { n } }), { sync: true }, 60_000);
      const taken = await waitFor(async () => (await a.endpoint('ep').tryTake('w-a', 1))[0], 'the job queued through B, taken through A');
      expect(await a.endpoint('ep').complete(taken.id, 'w-a', { kind: 'output', output }, taken.attempt)).toEqual({ applied: true, status: 'COMPLETED' });
      expect(await waiting).toMatchObject({ id: taken.id, status: 'COMPLETED', output });
    }
    // The small end came whole with its notification; the large one was read once.
    expect(readsB).toBe(1);
  });
});
