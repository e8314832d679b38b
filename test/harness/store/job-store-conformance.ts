/**
 * The job store conformance suite: every JobStore (src/harness/store/job-store.ts)
 * passes it. `describeJobStore(name, open)` registers the tests; `open` answers a fresh,
 * empty store and, for a store shared by several processes, `openPeer` (a second store
 * instance on the same data, as another harness process has), under which the suite also
 * checks exactly-once take and due rules across instances, and events reaching the peer.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { parseJobRequest, type JobErrorPayload } from '../../../src/job/index.js';
import type { JobStore, StoreEvent } from '../../../src/harness/store/job-store.js';
import { describeStoreLifecycle } from './job-store-conformance-lifecycle.js';
import { describeStoreValues } from './job-store-conformance-values.js';

export interface OpenedStore {
  readonly store: JobStore;
  /** Another store on the same data (another harness process); absent for a store of one process. */
  readonly openPeer?: () => Promise<JobStore>;
  /** Close what `open` opened (peers included) and drop the data. */
  close(): Promise<void>;
}

export type OpenStore = () => Promise<OpenedStore>;

export const T0 = 1_700_000_000_000;
export const RULES = { maxRequeues: 2 };
export const request = (body: Record<string, unknown> = {}) => parseJobRequest({ input: { n: 1 }, ...body });
export const failure: JobErrorPayload = { error_type: 'Error', error_message: 'boom', hostname: 'h', worker_id: 'w1', runtime_version: '0' };

/** A fresh store per test, closed after it. */
export function storeFixture(open: OpenStore): { current(): Promise<OpenedStore> } {
  let opened: OpenedStore | undefined;
  afterEach(async () => {
    await opened?.close();
    opened = undefined;
  });
  return {
    async current() {
      opened = await open();
      return opened;
    },
  };
}

/** Events a store hands to `subscribe`, collected. */
export function collect(store: JobStore): StoreEvent[] {
  const events: StoreEvent[] = [];
  store.subscribe((event) => events.push(event));
  return events;
}

export function describeJobStore(name: string, open: OpenStore): void {
  describe(`JobStore conformance: ${name}`, () => {
    const fixture = storeFixture(open);

    describe('submit and take', () => {
      it('stores a submitted job IN_QUEUE with its deadlines and retention, and answers copies', async () => {
        const { store } = await fixture.current();
        const body = request({ policy: { ttl: 60_000 } });
        const job = await store.submit('ep', body, {}, T0);
        expect(job).toMatchObject({
          endpointId: 'ep',
          status: 'IN_QUEUE',
          attempt: 0,
          retries: 0,
          lost: 0,
          submittedAt: T0,
          queuedAt: T0,
          expiresAt: T0 + 60_000,
          retentionMs: 30 * 60_000,
        });
        expect(job.id).toMatch(/^[0-9a-f-]{36}$/);
        (body.input as Record<string, unknown>).n = 99;
        const again = await store.get('ep', job.id);
        expect(again?.request.input).toEqual({ n: 1 });
        expect(again).toEqual(job);
        const sync = await store.submit('ep', request(), { sync: true, waitMs: 200_000 }, T0);
        expect(sync.id).toMatch(/^sync-/);
        expect(sync.retentionMs).toBe(200_000);
        expect(await store.listEndpoints()).toEqual(['ep']);
        expect(await store.get('ep', 'nope')).toBeUndefined();
        expect(await store.get('other', job.id)).toBeUndefined();
      });

      it('hands out queued jobs oldest first, up to max, each with a new attempt and an execution deadline', async () => {
        const { store } = await fixture.current();
        await store.createEndpoint('ep', { defaultExecutionTimeoutMs: 30_000 });
        const a = await store.submit('ep', request(), {}, T0);
        const b = await store.submit('ep', request({ policy: { executionTimeout: 7_000 } }), {}, T0 + 1);
        const c = await store.submit('ep', request(), {}, T0 + 2);
        const taken = await store.take('ep', 'w1', 2, T0 + 10);
        expect(taken).toEqual([
          { id: a.id, input: { n: 1 }, attempt: 1 },
          { id: b.id, input: { n: 1 }, attempt: 1, policy: { executionTimeout: 7_000 } },
        ]);
        expect(await store.get('ep', a.id)).toMatchObject({
          status: 'IN_PROGRESS',
          workerId: 'w1',
          startedAt: T0 + 10,
          executionDeadline: T0 + 30_010,
          executionTimeoutMs: 30_000,
        });
        expect(await store.get('ep', b.id)).toMatchObject({ executionDeadline: T0 + 7_010 });
        expect((await store.take('ep', 'w2', 5, T0 + 20)).map((job) => job.id)).toEqual([c.id]);
        expect(await store.take('ep', 'w2', 5, T0 + 20)).toEqual([]);
        expect((await store.getWorker('ep', 'w1'))?.jobIds).toEqual([a.id, b.id]);
        expect(await store.health('ep')).toEqual({
          jobs: { completed: 0, failed: 0, retried: 0, inProgress: 3, inQueue: 0 },
          workers: { idle: 0, running: 2 },
        });
      });

      it('gives each job to exactly one of many concurrent takers', async () => {
        const { store, openPeer } = await fixture.current();
        const stores = [store, ...(openPeer ? [await openPeer(), await openPeer()] : [])];
        const ids = new Set<string>();
        for (let i = 0; i < 60; i++) ids.add((await store.submit('ep', request(), {}, T0 + i)).id);
        const takers = Array.from({ length: 12 }, (_, n) => stores[n % stores.length] as JobStore);
        const taken: string[] = [];
        await Promise.all(
          takers.map(async (taker, n) => {
            for (;;) {
              const jobs = await taker.take('ep', `w${n}`, 3, T0 + 100);
              if (jobs.length === 0) return;
              taken.push(...jobs.map((job) => job.id));
            }
          }),
        );
        expect(taken).toHaveLength(60);
        expect(new Set(taken)).toEqual(ids);
      });
    });

    describe('while running: chunks, progress, results', () => {
      it('stamps chunks with the attempt, hands them out once, and refuses stale, foreign, repeated and early posts', async () => {
        const { store } = await fixture.current();
        const { id } = await store.submit('ep', request(), {}, T0);
        expect(await store.pushChunk('ep', id, 'w1', { output: 'early' }, undefined, T0)).toEqual({
          applied: false,
          reason: 'not_held_by_worker',
          status: 'IN_QUEUE',
        });
        await store.take('ep', 'w1', 1, T0);
        expect(await store.pushChunk('ep', id, 'w1', { output: 'a', metrics: { stream_index: 0 } }, 1, T0)).toEqual({ applied: true });
        expect(await store.pushChunk('ep', id, 'w1', { output: 'a', metrics: { stream_index: 0 } }, 1, T0)).toMatchObject({
          applied: false,
          reason: 'duplicate',
        });
        expect(await store.pushChunk('ep', id, 'w1', { output: 'b', metrics: { stream_index: 1 } }, undefined, T0)).toEqual({ applied: true });
        expect(await store.pushChunk('ep', id, 'w1', { output: 'x' }, 7, T0)).toMatchObject({ applied: false, reason: 'stale_attempt' });
        expect(await store.pushChunk('ep', id, 'w2', { output: 'x' }, 1, T0)).toMatchObject({ applied: false, reason: 'not_held_by_worker' });
        expect(await store.pushChunk('ep', 'nope', 'w1', { output: 'x' }, 1, T0)).toEqual({ applied: false, reason: 'not_found' });
        // Past the next index expected (2): not stored; EndpointJobs holds it until 2 comes (chunk-order.ts).
        expect(await store.pushChunk('ep', id, 'w1', { output: 'd', metrics: { stream_index: 3 } }, 1, T0)).toEqual({
          applied: false,
          reason: 'ahead',
          status: 'IN_PROGRESS',
          expected: 2,
        });
        expect(await store.get('ep', id)).toMatchObject({ chunkCount: 2, unreadChunkCount: 2 });
        expect(await store.peekStream('ep', id)).toHaveLength(2);
        const read = await store.readStream('ep', id);
        expect(read).toEqual({
          status: 'IN_PROGRESS',
          attempt: 1,
          retries: 0,
          stream: [
            { output: 'a', metrics: { stream_index: 0, attempt: 1 } },
            { output: 'b', metrics: { stream_index: 1, attempt: 1 } },
          ],
        });
        expect((await store.readStream('ep', id)).stream).toEqual([]);
        expect(await store.get('ep', id)).toMatchObject({ chunkCount: 2, unreadChunkCount: 0 });
        await expect(store.readStream('ep', 'nope')).rejects.toMatchObject({ code: 'SW_JOB_NOT_FOUND' });
        expect(await store.peekStream('ep', 'nope')).toBeUndefined();
      });

      it('shows progress output from the holder only', async () => {
        const { store } = await fixture.current();
        const { id } = await store.submit('ep', request(), {}, T0);
        await store.take('ep', 'w1', 1, T0);
        expect(await store.progress('ep', id, 'w1', { pct: 50 }, 1, T0)).toEqual({ applied: true });
        expect(await store.progress('ep', id, 'w2', { pct: 99 }, 1, T0)).toMatchObject({ applied: false, reason: 'not_held_by_worker' });
        expect(await store.progress('ep', id, 'w1', { pct: 99 }, 2, T0)).toMatchObject({ applied: false, reason: 'stale_attempt' });
        expect((await store.get('ep', id))?.output).toEqual({ pct: 50 });
      });

      it('keeps the last progress as the output of a running job only: FAILED, TIMED_OUT and CANCELLED show no output, COMPLETED its result', async () => {
        const { store } = await fixture.current();
        const failed = await store.submit('ep', request(), {}, T0);
        const timedOut = await store.submit('ep', request(), {}, T0);
        const deadline = await store.submit('ep', request({ policy: { executionTimeout: 5_000 } }), {}, T0);
        const cancelled = await store.submit('ep', request(), {}, T0);
        const completed = await store.submit('ep', request(), {}, T0);
        expect(await store.take('ep', 'w1', 5, T0)).toHaveLength(5);
        for (const { id } of [failed, timedOut, deadline, cancelled, completed]) {
          expect(await store.progress('ep', id, 'w1', { pct: 60 }, 1, T0 + 1)).toEqual({ applied: true });
          expect((await store.get('ep', id))?.output).toEqual({ pct: 60 });
        }
        const fail = await store.complete('ep', failed.id, 'w1', { kind: 'error', error: failure }, 1, T0 + 10);
        expect(fail.ended[0]).toMatchObject({ status: 'FAILED', error: failure });
        expect(fail.ended[0]).not.toHaveProperty('output');
        await store.complete('ep', timedOut.id, 'w1', { kind: 'error', error: failure, timedOut: true }, 1, T0 + 10);
        const ended = (await store.applyDue(T0 + 6_000)).ended;
        expect(ended.map((job) => [job.id, job.status])).toEqual([[deadline.id, 'TIMED_OUT']]);
        expect(ended[0]).not.toHaveProperty('output');
        const cancel = await store.cancel('ep', cancelled.id, T0 + 6_001);
        expect(cancel.job.status).toBe('CANCELLED');
        expect(cancel.job).not.toHaveProperty('output');
        await store.complete('ep', completed.id, 'w1', { kind: 'output', output: 'done' }, 1, T0 + 6_002);
        const read = async (id: string) => store.get('ep', id);
        expect(await read(failed.id)).toMatchObject({ status: 'FAILED', error: failure });
        for (const { id } of [failed, timedOut, deadline, cancelled]) expect(await read(id), id).not.toHaveProperty('output');
        expect(await read(completed.id)).toMatchObject({ status: 'COMPLETED', output: 'done' });
      });

      it('applies a result once with the attempt rules, and counts it', async () => {
        const { store } = await fixture.current();
        const ok = await store.submit('ep', request(), {}, T0);
        const bad = await store.submit('ep', request(), {}, T0);
        const late = await store.submit('ep', request(), {}, T0);
        await store.take('ep', 'w1', 3, T0 + 100);
        const done = await store.complete('ep', ok.id, 'w1', { kind: 'output', output: null }, 1, T0 + 1_100);
        expect(done.ack).toEqual({ applied: true, status: 'COMPLETED' });
        expect(done.ended).toHaveLength(1);
        expect(done.ended[0]).toMatchObject({ id: ok.id, status: 'COMPLETED', output: null, endedAt: T0 + 1_100, deleteAt: T0 + 1_100 + 30 * 60_000 });
        expect(done.ended[0]).not.toHaveProperty('executionDeadline');
        expect((await store.complete('ep', ok.id, 'w1', { kind: 'output', output: 1 }, 1, T0 + 1_200)).ack).toEqual({
          applied: true,
          status: 'COMPLETED',
          repeated: true,
        });
        expect((await store.complete('ep', ok.id, 'w2', { kind: 'output', output: 1 }, undefined, T0)).ack).toEqual({
          applied: false,
          reason: 'already_ended',
          status: 'COMPLETED',
        });
        expect((await store.complete('ep', ok.id, 'w1', { kind: 'output', output: 1 }, 3, T0)).ack).toMatchObject({ applied: false, reason: 'stale_attempt' });
        expect((await store.complete('ep', bad.id, 'w9', { kind: 'error', error: failure }, undefined, T0)).ack).toMatchObject({
          applied: false,
          reason: 'not_held_by_worker',
        });
        expect((await store.complete('ep', bad.id, 'w1', { kind: 'error', error: failure }, 1, T0 + 500)).ack).toEqual({ applied: true, status: 'FAILED' });
        expect((await store.get('ep', bad.id))?.error).toEqual(failure);
        expect((await store.complete('ep', late.id, undefined, { kind: 'error', error: failure, timedOut: true }, undefined, T0)).ack).toEqual({
          applied: true,
          status: 'TIMED_OUT',
        });
        expect((await store.complete('ep', 'nope', 'w1', { kind: 'output', output: 1 }, 1, T0)).ack).toEqual({ applied: false, reason: 'not_found' });
        expect((await store.health('ep')).jobs).toEqual({ completed: 1, failed: 2, retried: 0, inProgress: 0, inQueue: 0 });
        expect((await store.getWorker('ep', 'w1'))?.jobIds).toEqual([]);
      });

      it('writes results of different kinds posted at once as it writes each posted alone', async () => {
        const { store } = await fixture.current();
        // Posted in one turn (a store may join them in one statement): an output, a JSON null output, an error, a
        // timeout, and a post for a job this worker does not hold; then the same posts one at a time on twin jobs.
        const posts = [
          { kind: 'output', output: { text: 'a "quoted" \\ value', n: [1, 2] } },
          { kind: 'output', output: null },
          { kind: 'error', error: failure },
          { kind: 'error', error: { ...failure, error_message: 'slow' }, timedOut: true },
          { kind: 'output', output: 'not mine' },
        ] as const;
        const runOf = async (together: boolean): Promise<unknown[]> => {
          const jobs = await Promise.all(posts.map(() => store.submit('ep', request(), {}, T0)));
          expect(await store.take('ep', 'w1', posts.length, T0 + 10)).toHaveLength(posts.length);
          const post = (index: number) =>
            store.complete(
              'ep',
              jobs[index]?.id ?? '',
              index === posts.length - 1 ? 'w2' : 'w1',
              posts[index] as never,
              index === posts.length - 1 ? undefined : 1,
              T0 + 20,
            );
          const acks = together ? await Promise.all(posts.map((_, index) => post(index))) : [];
          if (!together) for (let index = 0; index < posts.length; index++) acks.push(await post(index));
          const read = await Promise.all(jobs.map(async ({ id }) => store.get('ep', id)));
          // The same up to the ids and what follows from them.
          return acks.map((ack, index) => {
            const { id, ...job } = read[index] ?? { id: '' };
            const ended = ack.ended.map(({ id: endedId, ...rest }) => ({ ...rest, sameId: endedId === id }));
            return { ack: ack.ack, ended, job: { ...job, request: undefined, submittedAt: undefined } };
          });
        };
        const together = await runOf(true);
        const alone = await runOf(false);
        expect(together).toEqual(alone);
        expect(together.map((entry) => (entry as { job: { status: string } }).job.status)).toEqual([
          'COMPLETED',
          'COMPLETED',
          'FAILED',
          'TIMED_OUT',
          'IN_PROGRESS',
        ]);
        expect((await store.health('ep')).jobs).toMatchObject({ completed: 4, failed: 4 });
      });
    });

    describeStoreLifecycle(fixture);
    describeStoreValues(fixture);
  });
}
