/**
 * The conformance suite's second half (job-store-conformance.ts registers it): caller
 * operations, lost jobs, time rules, workers, the request list, endpoints and events,
 * and, for a shared store, the same rules across two store instances.
 */
import { describe, expect, it } from 'vitest';
import type { JobStore } from '../../../src/harness/store/job-store.js';
import { RULES, T0, collect, failure, request, type OpenedStore } from './job-store-conformance.js';
import { eventually } from '../../kit/index.js';

const MINUTE = 60_000;

export function describeStoreLifecycle(fixture: { current(): Promise<OpenedStore> }): void {
  describe('caller operations', () => {
    it("cancels queued and running jobs (the running one's worker gets a stop), and refuses ended ones", async () => {
      const { store } = await fixture.current();
      const events = collect(store);
      const running = await store.submit('ep', request(), {}, T0);
      const queued = await store.submit('ep', request(), {}, T0 + 1);
      await store.take('ep', 'w1', 1, T0 + 2);
      const first = await store.cancel('ep', queued.id, T0 + 3);
      expect(first.job.status).toBe('CANCELLED');
      expect(first.job).not.toHaveProperty('endedAt');
      expect(first.stops).toEqual([]);
      const second = await store.cancel('ep', running.id, T0 + 5);
      expect(second.job).toMatchObject({ status: 'CANCELLED', endedAt: T0 + 5, deleteAt: T0 + 5 + 30 * MINUTE });
      expect(second.stops).toEqual([{ endpointId: 'ep', workerId: 'w1', jobId: running.id, reason: 'cancelled', attempt: 1 }]);
      expect(second.ended.map((job) => job.id)).toEqual([running.id]);
      expect(events).toContainEqual({ type: 'stop', endpointId: 'ep', workerId: 'w1', jobId: running.id, reason: 'cancelled', attempt: 1 });
      expect((await store.cancel('ep', running.id, T0 + 9)).ended).toEqual([]);
      // The cancelled running job keeps the worker that held it (issue 35); the queued one never had one.
      expect(second.job).toMatchObject({ cancelledFrom: 'w1' });
      expect(second.job).not.toHaveProperty('workerId');
      expect(await store.get('ep', running.id)).toMatchObject({ cancelledFrom: 'w1' });
      expect(first.job).not.toHaveProperty('cancelledFrom');
      expect((await store.list('ep', { workerId: 'w1', offset: 0, limit: 10 })).jobs.map((job) => job.id)).toEqual([running.id]);
      // Its worker's late result is refused as before (already ended), not taken for a repeat.
      expect((await store.complete('ep', running.id, 'w1', { kind: 'output', output: 1 }, 1, T0 + 10)).ack).toMatchObject({
        applied: false,
        reason: 'already_ended',
      });
      const other = await store.submit('ep', request(), {}, T0);
      await store.take('ep', 'w1', 1, T0);
      await store.complete('ep', other.id, 'w1', { kind: 'output', output: 1 }, 1, T0);
      await expect(store.cancel('ep', other.id, T0)).rejects.toMatchObject({ code: 'SW_CANCEL_NOT_ALLOWED' });
      await expect(store.cancel('ep', 'nope', T0)).rejects.toMatchObject({ code: 'SW_JOB_NOT_FOUND' });
    });

    it('retries FAILED and TIMED_OUT jobs at the end of the queue with the same input, and refuses others', async () => {
      const { store } = await fixture.current();
      const job = await store.submit('ep', request(), {}, T0);
      await store.take('ep', 'w1', 1, T0);
      await store.pushChunk('ep', job.id, 'w1', { output: 'x' }, 1, T0);
      await store.complete('ep', job.id, 'w1', { kind: 'error', error: failure }, 1, T0 + 10);
      const behind = await store.submit('ep', request(), {}, T0 + 20);
      const retried = await store.retry('ep', job.id, T0 + 30);
      expect(retried).toMatchObject({ status: 'IN_QUEUE', retries: 1, queuedAt: T0 + 30, chunkCount: 0, unreadChunkCount: 0, attempt: 1 });
      for (const field of ['error', 'output', 'startedAt', 'endedAt', 'deleteAt', 'workerId']) expect(retried).not.toHaveProperty(field);
      expect((await store.readStream('ep', job.id)).stream).toEqual([]);
      expect((await store.take('ep', 'w2', 2, T0 + 40)).map((taken) => [taken.id, taken.attempt])).toEqual([
        [behind.id, 1],
        [job.id, 2],
      ]);
      await expect(store.retry('ep', job.id, T0)).rejects.toMatchObject({ code: 'SW_RETRY_NOT_ALLOWED' });
      await expect(store.retry('ep', 'nope', T0)).rejects.toMatchObject({ code: 'SW_JOB_NOT_FOUND' });
      expect((await store.health('ep')).jobs.retried).toBe(1);
    });

    it('purges the queue only, and sets a new ttl', async () => {
      const { store } = await fixture.current();
      const running = await store.submit('ep', request(), {}, T0);
      await store.take('ep', 'w1', 1, T0);
      for (let i = 0; i < 3; i++) await store.submit('ep', request(), {}, T0);
      expect(await store.purgeQueue('ep', T0)).toBe(3);
      expect(await store.stateCounts('ep')).toMatchObject({ IN_QUEUE: 0, IN_PROGRESS: 1, retained: 1 });
      expect((await store.setTtl('ep', running.id, 20_000, T0 + 5)).expiresAt).toBe(T0 + 20_005);
      await expect(store.setTtl('ep', 'nope', 20_000, T0)).rejects.toMatchObject({ code: 'SW_JOB_NOT_FOUND' });
      expect(await store.purgeQueue('none', T0)).toBe(0);
    });
  });

  describe('lost jobs', () => {
    it('requeues a job whose take answer was lost, drops its chunks, refuses the old attempt, and fails it past maxRequeues', async () => {
      const { store } = await fixture.current();
      const { id } = await store.submit('ep', request(), {}, T0);
      for (let lost = 1; lost <= RULES.maxRequeues; lost++) {
        await store.take('ep', 'w1', 1, T0);
        await store.pushChunk('ep', id, 'w1', { output: 'x' }, lost, T0);
        expect((await store.requeueJob('ep', id, 'w2', RULES, T0)).requeued).toBe(false);
        expect((await store.requeueJob('ep', id, 'w1', RULES, T0 + lost)).requeued).toBe(true);
        expect(await store.get('ep', id)).toMatchObject({ status: 'IN_QUEUE', lost, retries: lost, unreadChunkCount: 0, chunkCount: 0 });
        expect((await store.complete('ep', id, 'w1', { kind: 'output', output: 1 }, lost, T0)).ack).toMatchObject({ applied: false, reason: 'stale_attempt' });
      }
      await store.take('ep', 'w1', 1, T0);
      const last = await store.requeueJob('ep', id, 'w1', RULES, T0 + 100);
      expect(last.requeued).toBe(false);
      expect(last.ended[0]).toMatchObject({ id, status: 'FAILED', error: { error_code: 'SW_REQUEUE_LIMIT' } });
    });

    it('removes a worker once and requeues its jobs; sweeps silent heartbeat workers only', async () => {
      const { store } = await fixture.current();
      const a = await store.submit('ep', request(), {}, T0);
      const b = await store.submit('ep', request(), {}, T0);
      await store.touchWorker('ep', 'w1', { heartbeats: true, initializing: true, pingIntervalMs: 5_000 }, T0);
      expect(await store.getWorker('ep', 'w1')).toMatchObject({ initializing: true, heartbeats: true, pingIntervalMs: 5_000, firstSeenAt: T0 });
      expect((await store.health('ep')).workers).toEqual({ idle: 0, running: 0 });
      await store.take('ep', 'w1', 1, T0 + 10);
      await store.take('ep', 'w2', 1, T0 + 10);
      expect(await store.getWorker('ep', 'w1')).toMatchObject({ initializing: false, lastSeenAt: T0 + 10, jobIds: [a.id] });
      const gone = await store.removeWorker('ep', 'w2', RULES, T0 + 20);
      expect(gone).toMatchObject({ endpointId: 'ep', workerId: 'w2', requeued: [b.id] });
      expect(await store.removeWorker('ep', 'w2', RULES, T0 + 20)).toBeUndefined();
      expect(await store.get('ep', b.id)).toMatchObject({ status: 'IN_QUEUE', lost: 1 });
      await store.touchWorker('ep', 'w3', {}, T0);
      const swept = await store.sweepSilentWorkers(T0 + 11, RULES, T0 + 30);
      expect(swept.map((worker) => [worker.workerId, worker.requeued])).toEqual([['w1', [a.id]]]);
      expect((await store.listWorkers('ep')).map((worker) => worker.id)).toEqual(['w3']);
    });

    it('sweeps each silent worker once, and requeues its job once, when several instances sweep at the same time', async () => {
      const { store, openPeer } = await fixture.current();
      const stores = [store, ...(openPeer ? [await openPeer(), await openPeer()] : [])];
      const ids: string[] = [];
      for (let i = 0; i < 6; i++) ids.push((await store.submit('ep', request(), {}, T0 + i)).id);
      for (let w = 0; w < 6; w++) {
        await store.touchWorker('ep', `w${w}`, { heartbeats: true }, T0);
        expect(await store.take('ep', `w${w}`, 1, T0 + 10)).toHaveLength(1);
      }
      const sweeps = stores.flatMap((sweeper) => [sweeper.sweepSilentWorkers(T0 + 11, RULES, T0 + 20), sweeper.sweepSilentWorkers(T0 + 11, RULES, T0 + 20)]);
      const swept = (await Promise.all(sweeps)).flat();
      expect(swept.map((worker) => worker.workerId).sort()).toEqual(['w0', 'w1', 'w2', 'w3', 'w4', 'w5']);
      expect(swept.flatMap((worker) => worker.requeued).sort()).toEqual([...ids].sort());
      for (const id of ids) expect(await store.get('ep', id)).toMatchObject({ status: 'IN_QUEUE', lost: 1, retries: 1 });
      expect((await store.health('ep')).jobs.retried).toBe(6);
      expect(await store.listWorkers('ep')).toEqual([]);
    });

    it('puts back a job taken for a poll that gave up: at its place in the queue, as if never taken, never counted as lost', async () => {
      const { store } = await fixture.current();
      const events = collect(store);
      const first = await store.submit('ep', request(), {}, T0);
      const second = await store.submit('ep', request(), {}, T0 + 1);
      expect(await store.take('ep', 'w1', 1, T0 + 10)).toEqual([{ id: first.id, input: { n: 1 }, attempt: 1 }]);
      expect(await store.returnJob('ep', first.id, 'w2', 1, T0 + 11)).toBe(false);
      expect(await store.returnJob('ep', first.id, 'w1', 2, T0 + 11)).toBe(false);
      expect(await store.returnJob('ep', 'nope', 'w1', 1, T0 + 11)).toBe(false);
      expect(await store.returnJob('ep', first.id, 'w1', 1, T0 + 11)).toBe(true);
      expect(await store.returnJob('ep', first.id, 'w1', 1, T0 + 11)).toBe(false);
      const back = await store.get('ep', first.id);
      expect(back).toMatchObject({ status: 'IN_QUEUE', attempt: 0, retries: 0, lost: 0, queuedAt: T0 });
      for (const field of ['workerId', 'startedAt', 'executionDeadline', 'executionTimeoutMs']) expect(back).not.toHaveProperty(field);
      expect(events.filter((event) => event.type === 'queued')).toHaveLength(3);
      expect(events).toContainEqual({ type: 'changed', endpointId: 'ep', jobId: first.id, status: 'IN_QUEUE' });
      expect((await store.getWorker('ep', 'w1'))?.jobIds).toEqual([]);
      // Handed out and given back more often than maxRequeues: still queued, never SW_REQUEUE_LIMIT.
      for (let i = 0; i <= RULES.maxRequeues + 1; i++) {
        expect((await store.take('ep', 'w1', 1, T0 + 20))[0]?.id).toBe(first.id);
        expect(await store.returnJob('ep', first.id, 'w1', 1, T0 + 21)).toBe(true);
      }
      expect((await store.take('ep', 'w3', 2, T0 + 30)).map((job) => [job.id, job.attempt])).toEqual([
        [first.id, 1],
        [second.id, 1],
      ]);
      expect((await store.health('ep')).jobs).toMatchObject({ retried: 0, failed: 0, inProgress: 2 });
    });

    it('finds jobs a worker has not reported for the whole silence window', async () => {
      const { store } = await fixture.current();
      const a = await store.submit('ep', request(), {}, T0);
      const b = await store.submit('ep', request(), {}, T0);
      await store.take('ep', 'w1', 2, T0);
      await store.touchWorker('ep', 'w1', { reportedJobIds: [a.id] }, T0 + 5_000);
      expect(await store.get('ep', a.id)).toMatchObject({ reportedAt: T0 + 5_000 });
      expect(await store.unreportedJobs('ep', 'w1', T0 + 1_000)).toEqual([b.id]);
      expect(await store.unreportedJobs('ep', 'w1', T0)).toEqual([]);
    });
  });

  describe('time rules', () => {
    it('applies ttl (any state, stop "expired"), execution timeout (TIMED_OUT, stop "timeout") and retention, each once', async () => {
      const { store, openPeer } = await fixture.current();
      const peer = openPeer ? await openPeer() : store;
      const running = await store.submit('ep', request({ policy: { ttl: 20_000 } }), {}, T0);
      const slow = await store.submit('ep', request({ policy: { executionTimeout: 5_000 } }), {}, T0);
      const queued = await store.submit('ep', request({ policy: { ttl: 10_000 } }), {}, T0);
      expect(await store.take('ep', 'w1', 2, T0)).toHaveLength(2);
      expect(await store.nextDueAt()).toBe(T0 + 5_000);
      const [first, second] = await Promise.all([store.applyDue(T0 + 6_000), peer.applyDue(T0 + 6_000)]);
      const timedOut = [...first.ended, ...second.ended];
      expect(timedOut.map((job) => [job.id, job.status])).toEqual([[slow.id, 'TIMED_OUT']]);
      expect(timedOut[0]?.error).toMatchObject({ error_code: 'SW_EXECUTION_TIMEOUT' });
      expect([...first.stops, ...second.stops]).toEqual([{ endpointId: 'ep', workerId: 'w1', jobId: slow.id, reason: 'timeout', attempt: 1 }]);
      expect(await store.nextDueAt()).toBe(T0 + 10_000);
      const expiry = await Promise.all([store.applyDue(T0 + 20_000), peer.applyDue(T0 + 20_000)]);
      const deleted = expiry.flatMap((outcome) => outcome.deleted.map((job) => job.id)).sort();
      expect(deleted).toEqual([queued.id, running.id].sort());
      expect(expiry.flatMap((outcome) => outcome.stops)).toEqual([{ endpointId: 'ep', workerId: 'w1', jobId: running.id, reason: 'expired', attempt: 1 }]);
      expect(await store.get('ep', queued.id)).toBeUndefined();
      expect(await store.nextDueAt()).toBe(T0 + 6_000 + 30 * MINUTE);
      const retention = await peer.applyDue(T0 + 6_000 + 30 * MINUTE);
      expect(retention.deleted.map((job) => job.id)).toEqual([slow.id]);
      expect(await store.nextDueAt()).toBeUndefined();
      expect((await store.health('ep')).jobs).toMatchObject({ failed: 1 });
    });

    it('moves a deadline: a later ttl no longer applies at the old time', async () => {
      const { store } = await fixture.current();
      const job = await store.submit('ep', request({ policy: { ttl: 10_000 } }), {}, T0);
      await store.setTtl('ep', job.id, 60_000, T0 + 1_000);
      expect((await store.applyDue(T0 + 30_000)).deleted).toEqual([]);
      expect(await store.nextDueAt()).toBe(T0 + 61_000);
    });
  });

  describe('the request list and endpoints', () => {
    it('pages newest first with state filter, id search and totals', async () => {
      const { store } = await fixture.current();
      const ids: string[] = [];
      for (let i = 0; i < 7; i++) ids.push((await store.submit('ep', request(), {}, T0 + i)).id);
      await store.take('ep', 'w1', 2, T0 + 10);
      const newest = [...ids].reverse();
      expect(await store.list('ep', { offset: 0, limit: 3 })).toEqual({
        total: 7,
        jobs: await Promise.all(newest.slice(0, 3).map(async (id) => store.get('ep', id))),
      });
      expect((await store.list('ep', { offset: 3, limit: 3 })).jobs.map((job) => job.id)).toEqual(newest.slice(3, 6));
      const running = await store.list('ep', { states: ['IN_PROGRESS'], offset: 0, limit: 10 });
      expect(running.total).toBe(2);
      expect(running.jobs.map((job) => job.id)).toEqual([ids[1], ids[0]]);
      const target = ids[4] as string;
      expect((await store.list('ep', { search: target.toUpperCase(), offset: 0, limit: 10 })).jobs.map((job) => job.id)).toEqual([target]);
      const part = target.slice(0, 8);
      expect((await store.list('ep', { search: part, offset: 0, limit: 10 })).jobs.map((job) => job.id)).toContain(target);
      expect(await store.list('ep', { search: target, states: ['COMPLETED'], offset: 0, limit: 10 })).toEqual({ total: 0, jobs: [] });
      expect(await store.list('none', { offset: 0, limit: 10 })).toEqual({ total: 0, jobs: [] });
      expect(await store.stateCounts('ep')).toEqual({ IN_QUEUE: 5, IN_PROGRESS: 2, COMPLETED: 0, FAILED: 0, CANCELLED: 0, TIMED_OUT: 0, retained: 7 });
    });

    it('filters the list by worker, kind, error code, submission time and text in input or output, oldest first on demand', async () => {
      const { store } = await fixture.current();
      const a = await store.submit('ep', request({ input: { prompt: 'Paint a Lighthouse' } }), {}, T0);
      const b = await store.submit('ep', request({ input: { prompt: 'a cat' } }), { sync: true }, T0 + 1_000);
      const c = await store.submit('ep', request({ input: { prompt: 'a dog' } }), {}, T0 + 2_000);
      await store.take('ep', 'w1', 1, T0 + 3_000);
      await store.take('ep', 'w2', 1, T0 + 3_000);
      await store.complete('ep', a.id, 'w1', { kind: 'output', output: { caption: 'stormy SEA' } }, 1, T0 + 4_000);
      await store.complete('ep', b.id, 'w2', { kind: 'error', error: { ...failure, worker_id: 'w2', error_code: 'SW_OUT_OF_MEMORY' } }, 1, T0 + 4_000);
      const ids = async (query: Record<string, unknown>) => {
        const page = await store.list('ep', { offset: 0, limit: 10, ...query });
        return { total: page.total, ids: page.jobs.map((job) => job.id) };
      };
      // The worker that ran a job is kept after it ends.
      expect(await ids({ workerId: 'w1' })).toEqual({ total: 1, ids: [a.id] });
      expect(await ids({ workerId: 'w2' })).toEqual({ total: 1, ids: [b.id] });
      expect(await ids({ kind: 'runsync' })).toEqual({ total: 1, ids: [b.id] });
      expect(await ids({ kind: 'run' })).toEqual({ total: 2, ids: [c.id, a.id] });
      expect(await ids({ errorCode: 'SW_OUT_OF_MEMORY' })).toEqual({ total: 1, ids: [b.id] });
      // A code's beginning finds it (SW_HANDLER finds SW_HANDLER_ERROR); another beginning does not.
      expect(await ids({ errorCode: 'SW_OUT_OF' })).toEqual({ total: 1, ids: [b.id] });
      expect(await ids({ errorCode: 'SW_OUT_OF_MEMORY_X' })).toEqual({ total: 0, ids: [] });
      expect(await ids({ errorCode: 'OUT_OF' })).toEqual({ total: 0, ids: [] });
      // Text in the error's message.
      expect(await ids({ text: 'BOOM' })).toEqual({ total: 1, ids: [b.id] });
      expect(await ids({ submittedFrom: T0 + 1_000, submittedTo: T0 + 2_000 })).toEqual({ total: 1, ids: [b.id] });
      // Text in the input or the output, case-insensitive.
      expect(await ids({ text: 'lighthouse' })).toEqual({ total: 1, ids: [a.id] });
      expect(await ids({ text: 'sea' })).toEqual({ total: 1, ids: [a.id] });
      expect(await ids({ text: 'a dog', states: ['IN_QUEUE'] })).toEqual({ total: 1, ids: [c.id] });
      expect(await ids({ order: 'oldest', limit: 2 })).toEqual({ total: 3, ids: [a.id, b.id] });
      // Longest queue wait first (a waited 3 s, b 2 s; c never started: last), longest execution first (both ran 1 s: newest first).
      expect(await ids({ order: 'waited' })).toEqual({ total: 3, ids: [a.id, b.id, c.id] });
      expect(await ids({ order: 'slowest' })).toEqual({ total: 3, ids: [b.id, a.id, c.id] });
      expect(await ids({ search: a.id, workerId: 'w2' })).toEqual({ total: 0, ids: [] });
    });

    it('creates, updates, lists and deletes endpoints', async () => {
      const { store } = await fixture.current();
      await store.createEndpoint('b');
      await store.createEndpoint('a', { defaultExecutionTimeoutMs: 9_000 });
      expect(await store.listEndpoints()).toEqual(['a', 'b']);
      expect(await store.endpointSettings('a')).toEqual({ defaultExecutionTimeoutMs: 9_000 });
      expect(await store.endpointSettings('b')).toEqual({});
      await store.createEndpoint('a', {});
      expect(await store.endpointSettings('a')).toEqual({});
      const job = await store.submit('a', request(), {}, T0);
      expect(await store.deleteEndpoint('a')).toBe(true);
      expect(await store.deleteEndpoint('a')).toBe(false);
      expect(await store.get('a', job.id)).toBeUndefined();
      expect(await store.endpointSettings('a')).toBeUndefined();
    });
  });

  describe('events', () => {
    it('announces queued, changed, stop and worker events to subscribers, and to another instance', async () => {
      const { store, openPeer } = await fixture.current();
      const peer: JobStore | undefined = openPeer ? await openPeer() : undefined;
      const events = collect(store);
      const peerEvents = peer ? collect(peer) : undefined;
      // A store may send its events only to the peers it knows (PostgreSQL: peers.ts; a peer that
      // joins later is told to read again instead): the sequence below starts once the peer hears it.
      if (peerEvents)
        await eventually(async () => {
          await store.submit('probe', request(), {}, T0);
          expect(peerEvents).toContainEqual(expect.objectContaining({ type: 'queued', endpointId: 'probe' }));
        });
      const job = await store.submit('ep', request(), {}, T0);
      await store.take('ep', 'w1', 1, T0);
      await store.pushChunk('ep', job.id, 'w1', { output: 'x' }, 1, T0);
      await store.cancel('ep', job.id, T0);
      const expected = [
        // A store may name the deadline a change set (due: the scheduler arms for it without asking).
        expect.objectContaining({ type: 'queued', endpointId: 'ep' }),
        { type: 'changed', endpointId: 'ep', jobId: job.id },
        { type: 'worker', endpointId: 'ep', workerId: 'w1' },
        { type: 'stop', endpointId: 'ep', workerId: 'w1', jobId: job.id, reason: 'cancelled', attempt: 1 },
      ];
      for (const event of expected) expect(events).toContainEqual(event);
      if (peerEvents)
        await eventually(() => {
          for (const event of expected) expect(peerEvents).toContainEqual(event);
        });
      const unsubscribe = store.subscribe(() => {
        throw new Error('a listener that throws changes nothing');
      });
      await store.submit('ep', request(), {}, T0);
      unsubscribe();
      expect(events.filter((event) => event.type === 'queued' && event.endpointId === 'ep')).toHaveLength(2);
    });
  });
}
