/**
 * Worker liveness on the harness's clock (a ManualClock): which workers a sweep declares
 * gone, and when, with no real time waited.
 */
import { describe, expect, it } from 'vitest';
import { Harness, ManualClock, MemoryJobStore } from '../../src/harness/index.js';
import { WorkerLiveness, type GoneWorker } from '../../packages/platform/src/harness/worker-api/worker-liveness.js';
import { parseJobRequest } from '../../src/job/index.js';
import type { TouchWorker } from '../../src/harness/store/job-store.js';

/** A memory store whose presence calls fail while `down` (a PostgreSQL restart, as the store answers it). */
class StoreWithOutage extends MemoryJobStore {
  down = false;
  override touchWorker(endpointId: string, workerId: string, touch: TouchWorker, now: number): ReturnType<MemoryJobStore['touchWorker']> {
    if (this.down) return Promise.reject(new Error('the job store is unavailable'));
    return super.touchWorker(endpointId, workerId, touch, now);
  }
  override sweepSilentWorkers(...args: Parameters<MemoryJobStore['sweepSilentWorkers']>): ReturnType<MemoryJobStore['sweepSilentWorkers']> {
    if (this.down) return Promise.reject(new Error('the job store is unavailable'));
    return super.sweepSilentWorkers(...args);
  }
}

const LIVENESS = { pingIntervalMs: 1_000, missedPings: 3 };
const SILENCE = LIVENESS.pingIntervalMs * LIVENESS.missedPings;

describe('WorkerLiveness on a ManualClock', () => {
  it('sweeps no worker before one silence window has passed since it started: ages from before say nothing', async () => {
    const clock = new ManualClock();
    const store = new MemoryJobStore();
    // What a previous harness process left in a shared store: workers last seen 2 minutes ago, each with a job.
    const before = clock.now() - 120_000;
    const jobs: string[] = [];
    for (const workerId of ['back-late', 'back-soon']) {
      jobs.push((await store.submit('ep', parseJobRequest({ input: {} }), {}, before)).id);
      await store.touchWorker('ep', workerId, { heartbeats: true }, before);
      expect(await store.take('ep', workerId, 1, before)).toHaveLength(1);
    }
    const harness = new Harness({ clock, store });
    const gone: GoneWorker[] = [];
    const liveness = new WorkerLiveness(harness, LIVENESS, (worker) => gone.push(worker));
    expect(await liveness.sweep()).toEqual([]);
    clock.advance(SILENCE - 1);
    // One worker reconnects within the window; the other stays silent.
    await liveness.seen(harness.endpoint('ep'), 'back-soon');
    expect(await liveness.sweep()).toEqual([]);
    for (const id of jobs) expect(await store.get('ep', id)).toMatchObject({ status: 'IN_PROGRESS', lost: 0 });
    clock.advance(1);
    const swept = await liveness.sweep();
    expect(swept.map((worker) => [worker.workerId, worker.requeued])).toEqual([['back-late', [jobs[0]]]]);
    expect(gone.map((worker) => worker.workerId)).toEqual(['back-late']);
    expect(await store.get('ep', jobs[1] as string)).toMatchObject({ status: 'IN_PROGRESS', workerId: 'back-soon' });
    liveness.stop();
    await harness.close();
  });

  it('gives every worker a whole window again once its store is back from failing: the heartbeats of the outage were not written', async () => {
    const clock = new ManualClock();
    const store = new StoreWithOutage();
    const harness = new Harness({ clock, store });
    const endpoint = harness.endpoint('ep');
    const liveness = new WorkerLiveness(harness, LIVENESS, () => undefined);
    clock.advance(SILENCE);
    const jobs: string[] = [];
    for (const workerId of ['alive', 'dead']) {
      jobs.push((await endpoint.submit(parseJobRequest({ input: {} }))).id);
      await liveness.seen(endpoint, workerId);
      expect(await endpoint.tryTake(workerId, 1)).toHaveLength(1);
    }
    // The store goes down for 2.5 s of a 3 s window: a sweep and a heartbeat fail meanwhile.
    store.down = true;
    clock.advance(1_000);
    await expect(liveness.sweep()).rejects.toThrow('unavailable');
    clock.advance(500);
    await expect(liveness.seen(endpoint, 'alive')).rejects.toThrow('unavailable');
    clock.advance(1_000);
    store.down = false;
    // Back, before the live worker's next heartbeat is written: its age (3.1 s) says nothing. A new window starts here.
    clock.advance(600);
    expect(await liveness.sweep()).toEqual([]);
    clock.advance(400);
    await liveness.seen(endpoint, 'alive');
    clock.advance(SILENCE - 401);
    expect(await liveness.sweep()).toEqual([]);
    // A whole window after the first sweep with the store back: the silent one is gone, the live one kept its job.
    clock.advance(1);
    expect((await liveness.sweep()).map((worker) => [worker.workerId, worker.requeued])).toEqual([['dead', [jobs[1]]]]);
    expect(await endpoint.find(jobs[0] as string)).toMatchObject({ status: 'IN_PROGRESS', workerId: 'alive', lost: 0 });
    liveness.stop();
    await harness.close();
  });

  it("sweeps a worker first seen after the start once it is silent for the window, on the scheduler's clock", async () => {
    const clock = new ManualClock();
    const harness = new Harness({ clock });
    const endpoint = harness.endpoint('ep');
    const gone: GoneWorker[] = [];
    const liveness = new WorkerLiveness(harness, { ...LIVENESS, sweepIntervalMs: 100 }, (worker) => gone.push(worker));
    const { id } = await endpoint.submit(parseJobRequest({ input: {} }));
    await liveness.seen(endpoint, 'w1');
    expect(await endpoint.tryTake('w1', 1)).toHaveLength(1);
    // Sweeps run every 100 ms on the clock: advance in steps, letting each sweep's store calls answer.
    const advance = async (ms: number): Promise<void> => {
      for (let moved = 0; moved < ms; moved += 100) {
        clock.advance(100);
        for (let i = 0; i < 50; i++) await Promise.resolve();
      }
    };
    await advance(SILENCE - 100);
    expect(gone).toEqual([]);
    await advance(300);
    expect(gone.map((worker) => [worker.workerId, worker.requeued])).toEqual([['w1', [id]]]);
    expect(await endpoint.find(id)).toMatchObject({ status: 'IN_QUEUE', lost: 1 });
    liveness.stop();
    await harness.close();
  });

  it('answers a heartbeat listing jobs that no longer run with its worker with the stops to send, naming the attempt where it is the last', async () => {
    const clock = new ManualClock();
    const harness = new Harness({ clock });
    const endpoint = harness.endpoint('ep');
    const liveness = new WorkerLiveness(harness, LIVENESS, () => undefined);
    const submit = async (): Promise<string> => (await endpoint.submit(parseJobRequest({ input: {}, policy: { ttl: 60_000 } }))).id;
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push(await submit());
    const [mine, cancelled, finished, requeued, elsewhere, expired] = ids as [string, string, string, string, string, string];
    expect(await endpoint.tryTake('w1', 6)).toHaveLength(6);
    await endpoint.cancel(cancelled);
    await endpoint.complete(finished, 'w1', { kind: 'output', output: 1 });
    await endpoint.requeueJob(requeued, 'w1');
    await endpoint.requeueJob(elsewhere, 'w1');
    // The queue now holds requeued then elsewhere: w2 takes the first only.
    expect((await endpoint.tryTake('w2', 1)).map((job) => job.id)).toEqual([requeued]);
    await endpoint.complete(requeued, 'w2', { kind: 'output', output: 2 });
    await endpoint.setTtl(expired, 1_000);
    clock.advance(1_000);
    const { stray } = await liveness.reconcile(endpoint, 'w1', [mine, cancelled, finished, requeued, elsewhere, expired]);
    expect(stray).toEqual([
      { jobId: cancelled, reason: 'cancelled', attempt: 1 },
      { jobId: requeued, reason: 'cancelled' },
      { jobId: elsewhere, reason: 'cancelled', attempt: 1 },
      { jobId: expired, reason: 'expired' },
    ]);
    liveness.stop();
    await harness.close();
  });
});
