import { afterEach, describe, expect, it } from 'vitest';
import type { Job, JobResult, StreamChunk } from '../../src/job/index.js';
import { createLogger } from '../../src/log/index.js';
import type { StopListener, TakeRequest, Transport } from '../../src/transports/index.js';
import { WorkerRuntime, resolveOptions } from '../../src/worker/index.js';

/** A transport that answers one take with more jobs than asked for, as a misbehaving platform could. */
class GenerousTransport implements Transport {
  readonly kind = 'test';
  readonly workerId = 'generous';
  readonly heartbeats: string[][] = [];
  readonly results = new Map<string, JobResult>();
  #served = false;

  async take(request: TakeRequest): Promise<Job[]> {
    if (!this.#served) {
      this.#served = true;
      return ['a', 'b', 'c'].map((id) => ({ id, input: {} }));
    }
    await new Promise<void>((resolve) => request.signal.addEventListener('abort', () => resolve(), { once: true }));
    return [];
  }
  async postChunk(_jobId: string, _chunk: StreamChunk): Promise<void> {}
  async postProgress(): Promise<void> {}
  async postResult(jobId: string, result: JobResult): Promise<void> {
    this.results.set(jobId, result);
  }
  setJobsInProgress(jobIds: readonly string[]): void {
    this.heartbeats.push([...jobIds]);
  }
  onStop(_listener: StopListener): () => void {
    return () => {};
  }
  async close(): Promise<void> {}
}

let runtime: WorkerRuntime | undefined;
afterEach(async () => {
  await runtime?.stop();
});

describe('jobs held beyond the free slots', () => {
  it('are listed in the heartbeat while they wait, and never run beyond the limit', async () => {
    const transport = new GenerousTransport();
    let running = 0;
    let peak = 0;
    runtime = new WorkerRuntime(
      async () => {
        running++;
        peak = Math.max(peak, running);
        await new Promise((resolve) => setTimeout(resolve, 20));
        running--;
        return 'ok';
      },
      resolveOptions({ concurrency: 1, gpuSampling: false }),
      transport,
      createLogger({ level: 'silent' }),
    );
    void runtime.start();
    for (let i = 0; i < 200 && transport.results.size < 3; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    expect([...transport.results.keys()].sort()).toEqual(['a', 'b', 'c']);
    expect(peak).toBe(1);
    expect(transport.heartbeats).toContainEqual(['a', 'b', 'c']);
    expect(transport.heartbeats.at(-1)).toEqual([]);
  });
});
