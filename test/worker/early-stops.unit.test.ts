/**
 * A stop that arrives before its job (src/worker/early-stops.ts): the job and its stop come
 * by different roads (a take answer or an IPC push; a job-stop poll), and the platform sends
 * a stop once. With the runtime and a transport whose stops the test sends: a stop for a
 * job still on its way aborts the run as it starts (the handler's signal is already
 * aborted, no result is posted, its slot goes back with runEnded), and so does one for a
 * job waiting for a slot; a stop naming another attempt, or one older than its keep, does
 * not. And the kept stops themselves, on a ManualClock: by job, at most `max`, for `keepMs`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock/index.js';
import type { Job, JobResult, StopReason, StreamChunk } from '../../src/job/index.js';
import { createLogger } from '../../src/log/index.js';
import type { StopListener, TakeRequest, Transport } from '../../src/transports/index.js';
import { EarlyStops } from '../../src/worker/early-stops.js';
import { WorkerRuntime, resolveOptions, type JobContext } from '../../src/worker/index.js';

/** Jobs the test hands over one take at a time; stops the test sends; results and ended runs recorded. */
class HandFedTransport implements Transport {
  readonly kind = 'test';
  readonly workerId = 'fed';
  readonly results = new Map<string, JobResult>();
  readonly ended: string[] = [];
  readonly #queue: Job[] = [];
  readonly #listeners = new Set<StopListener>();
  #wake: (() => void) | undefined;

  give(...jobs: Job[]): void {
    this.#queue.push(...jobs);
    this.#wake?.();
  }

  stop(jobId: string, reason: StopReason, attempt?: number): void {
    for (const listener of this.#listeners) listener(jobId, reason, attempt);
  }

  async take(request: TakeRequest): Promise<Job[]> {
    while (this.#queue.length === 0 && !request.signal.aborted) {
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
        request.signal.addEventListener('abort', () => resolve(), { once: true });
      });
    }
    return this.#queue.splice(0, request.max);
  }
  async postChunk(_jobId: string, _chunk: StreamChunk): Promise<void> {}
  async postProgress(): Promise<void> {}
  async postResult(jobId: string, result: JobResult): Promise<void> {
    this.results.set(jobId, result);
  }
  runEnded(job: Job): void {
    this.ended.push(job.id);
  }
  setJobsInProgress(): void {}
  onStop(listener: StopListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
  async close(): Promise<void> {}
}

async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
}

let runtime: WorkerRuntime | undefined;
afterEach(async () => {
  const stopping = runtime?.stop('shutdown', { runsWithinMs: 0 });
  runtime = undefined;
  await stopping;
});

/**
 * A runtime of concurrency 1 whose handler holds each job until the test answers it (`holds`,
 * by job id: then `done-<id>`) or its signal aborts (then it throws the reason); `aborted`
 * lists the jobs whose signal was already aborted when the handler began. Answers once it waits for jobs.
 */
async function start(): Promise<{ transport: HandFedTransport; aborted: string[]; holds: Map<string, () => void> }> {
  const transport = new HandFedTransport();
  const aborted: string[] = [];
  const holds = new Map<string, () => void>();
  const made = new WorkerRuntime(
    (job: { id: string }, ctx: JobContext) => {
      if (ctx.signal.aborted) {
        aborted.push(job.id);
        throw ctx.signal.reason as Error;
      }
      return new Promise((resolve, reject) => {
        holds.set(job.id, () => resolve(`done-${job.id}`));
        ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason as Error), { once: true });
      });
    },
    resolveOptions({ concurrency: 1, gpuSampling: false }),
    transport,
    createLogger({ level: 'silent' }),
  );
  runtime = made;
  void made.start();
  await settle();
  return { transport, aborted, holds };
}

describe('a stop that arrives before its job', () => {
  it('aborts the run as it starts: the handler sees its signal aborted, no result is posted, and the slot goes back', async () => {
    const { transport, aborted, holds } = await start();
    transport.stop('j1', 'cancelled');
    transport.give({ id: 'j1', input: {} });
    await settle();
    expect(aborted).toEqual(['j1']);
    expect(transport.results.has('j1')).toBe(false);
    expect(transport.ended).toEqual(['j1']);
    // The slot it held runs the next job to its result.
    transport.give({ id: 'j2', input: {} });
    await settle();
    holds.get('j2')?.();
    await settle();
    expect(transport.results.get('j2')).toEqual({ kind: 'output', output: 'done-j2' });
  });

  it('aborts a job that was taken and waits for a slot, once it starts', async () => {
    const { transport, aborted, holds } = await start();
    transport.give({ id: 'busy', input: {} }, { id: 'waiting', input: {} });
    await settle();
    transport.stop('waiting', 'cancelled');
    holds.get('busy')?.();
    await settle();
    expect(transport.results.get('busy')).toEqual({ kind: 'output', output: 'done-busy' });
    expect(aborted).toEqual(['waiting']);
    expect(transport.results.has('waiting')).toBe(false);
  });

  it('leaves a run of another attempt alone', async () => {
    const { transport, aborted, holds } = await start();
    transport.stop('j1', 'cancelled', 1);
    transport.give({ id: 'j1', input: {}, attempt: 2 });
    await settle();
    holds.get('j1')?.();
    await settle();
    expect(aborted).toEqual([]);
    expect(transport.results.get('j1')).toEqual({ kind: 'output', output: 'done-j1' });
  });
});

describe('EarlyStops', () => {
  it('gives a stop to its job once, by id and attempt', () => {
    const stops = new EarlyStops(new ManualClock());
    stops.remember('a', 'timeout', 2);
    expect(stops.takeFor({ id: 'b', input: {} })).toBeUndefined();
    expect(stops.takeFor({ id: 'a', input: {}, attempt: 3 })).toBeUndefined();
    expect(stops.takeFor({ id: 'a', input: {}, attempt: 2 })).toBe('timeout');
    expect(stops.takeFor({ id: 'a', input: {}, attempt: 2 })).toBeUndefined();
    stops.remember('c', 'cancelled', undefined);
    expect(stops.takeFor({ id: 'c', input: {}, attempt: 7 })).toBe('cancelled');
    expect(stops.size).toBe(0);
  });

  it('keeps a stop for keepMs, and at most max of them, the oldest going first', () => {
    const clock = new ManualClock();
    const stops = new EarlyStops(clock, 1_000, 2);
    stops.remember('a', 'cancelled', undefined);
    clock.advance(999);
    expect(stops.takeFor({ id: 'a', input: {} })).toBe('cancelled');
    stops.remember('b', 'cancelled', undefined);
    clock.advance(1_000);
    expect(stops.takeFor({ id: 'b', input: {} })).toBeUndefined();
    stops.remember('c', 'cancelled', undefined);
    stops.remember('d', 'cancelled', undefined);
    stops.remember('e', 'cancelled', undefined);
    expect(stops.size).toBe(2);
    expect(stops.takeFor({ id: 'c', input: {} })).toBeUndefined();
    expect(stops.takeFor({ id: 'e', input: {} })).toBe('cancelled');
    // Expired ones are swept when another comes.
    clock.advance(1_000);
    stops.remember('f', 'cancelled', undefined);
    expect(stops.size).toBe(1);
  });
});
