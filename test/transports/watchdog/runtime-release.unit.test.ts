/**
 * The worker runtime takes a job off the deadline watchdog's board once its handler has
 * settled, before the result is posted: a post that retries past the deadline plus
 * grace must never let the watchdog report a finished job TIMED_OUT. Each attempt of a
 * job goes on the board with its attempt.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Job, JobResult } from '../../../src/job/index.js';
import { createLogger } from '../../../src/log/index.js';
import type { StopListener, TakeRequest, Transport } from '../../../src/transports/index.js';
import type { JobWatch } from '../../../src/transports/watchdog/index.js';
import { WorkerRuntime, resolveOptions } from '../../../src/worker/index.js';

/** What happened, in order. */
type Step =
  | { kind: 'watch'; jobId: string; attempt: number | undefined; handle: number }
  | { kind: 'unwatch'; handle: number }
  | { kind: 'post-start' | 'post-end'; jobId: string };

class RecordingWatch implements JobWatch {
  readonly steps: Step[];
  #next = 0;
  constructor(steps: Step[]) {
    this.steps = steps;
  }
  watch(jobId: string, _deadlineAt: number, _startedAt?: number, attempt?: number): number {
    const handle = this.#next++;
    this.steps.push({ kind: 'watch', jobId, attempt, handle });
    return handle;
  }
  unwatch(handle: number): void {
    this.steps.push({ kind: 'unwatch', handle });
  }
  onFired(): () => void {
    return () => {};
  }
}

/** One job (with an attempt) on the first take; its result post hangs until `land()`. */
class SlowPostTransport implements Transport {
  readonly kind = 'test';
  readonly workerId = 'slow-post';
  readonly steps: Step[];
  readonly results: JobResult[] = [];
  land: () => void = () => {};
  readonly posting: Promise<void>;
  #posting: () => void = () => {};
  #served = false;

  constructor(steps: Step[]) {
    this.steps = steps;
    this.posting = new Promise((resolve) => (this.#posting = resolve));
  }
  async take(request: TakeRequest): Promise<Job[]> {
    if (!this.#served) {
      this.#served = true;
      return [{ id: 'finished-job', input: {}, attempt: 2 }];
    }
    await new Promise<void>((resolve) => request.signal.addEventListener('abort', () => resolve(), { once: true }));
    return [];
  }
  async postChunk(): Promise<void> {}
  async postProgress(): Promise<void> {}
  async postResult(jobId: string, result: JobResult): Promise<void> {
    this.steps.push({ kind: 'post-start', jobId });
    this.#posting();
    await new Promise<void>((resolve) => (this.land = resolve));
    this.results.push(result);
    this.steps.push({ kind: 'post-end', jobId });
  }
  setJobsInProgress(): void {}
  onStop(_listener: StopListener): () => void {
    return () => {};
  }
  async close(): Promise<void> {}
}

let runtime: WorkerRuntime | undefined;
afterEach(async () => {
  await runtime?.stop();
  runtime = undefined;
});

describe('the deadline watchdog and a finished job', () => {
  it('releases the board slot when the handler settles, before the result post completes', async () => {
    const steps: Step[] = [];
    const transport = new SlowPostTransport(steps);
    const watch = new RecordingWatch(steps);
    runtime = new WorkerRuntime(
      async () => 'done',
      resolveOptions({ concurrency: 1, gpuSampling: false }),
      transport,
      createLogger({ level: 'silent' }),
      {},
      { jobWatch: watch },
    );
    void runtime.start();
    await transport.posting;
    // The post is in flight and has not landed: the job must already be off the board.
    expect(steps).toEqual([
      { kind: 'watch', jobId: 'finished-job', attempt: 2, handle: 0 },
      { kind: 'unwatch', handle: 0 },
      { kind: 'post-start', jobId: 'finished-job' },
    ]);
    transport.land();
    for (let i = 0; i < 200 && runtime.completed < 1; i++) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(runtime.completed).toBe(1);
    expect(transport.results).toEqual([{ kind: 'output', output: 'done' }]);
    // Released once, never again after the post.
    expect(steps.filter((step) => step.kind === 'unwatch')).toHaveLength(1);
    expect(steps.at(-1)).toEqual({ kind: 'post-end', jobId: 'finished-job' });
  });
});
