/**
 * A run's slot is free once its handler has finished, while its result is posted in the
 * background (src/worker/posting-runs.ts), with the runtime and a transport whose result
 * posts the test answers by hand: the job stays in the heartbeat until its post is
 * answered, at most `concurrency` posts go on in the background (past that a finished run
 * keeps its slot and no take asks for it), a held run moves to the background when one of
 * them is answered, a result asking for a new worker (refreshWorker) keeps its slot, and
 * stop() waits for the posts still pending.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Job, JobResult, StreamChunk } from '../../src/job/index.js';
import { createLogger } from '../../src/log/index.js';
import type { StopListener, TakeRequest, Transport } from '../../src/transports/index.js';
import { WorkerRuntime, resolveOptions } from '../../src/worker/index.js';

interface HeldPost {
  readonly jobId: string;
  readonly result: JobResult;
  answer(): void;
}

/** Hands out `jobs` from a queue (at most `max` a take); every result post waits until the test answers it. */
class HandAnsweredTransport implements Transport {
  readonly kind = 'test';
  readonly workerId = 'hand';
  readonly queue: Job[];
  readonly takes: number[] = [];
  readonly heartbeats: string[][] = [];
  readonly posts: HeldPost[] = [];
  readonly answered = new Map<string, JobResult>();
  readonly #waiting: Array<() => void> = [];

  constructor(count: number) {
    this.queue = Array.from({ length: count }, (_, i) => ({ id: `j${i}`, input: { i } }));
  }

  async take(request: TakeRequest): Promise<Job[]> {
    this.takes.push(request.max);
    while (this.queue.length === 0 && !request.signal.aborted) {
      await new Promise<void>((resolve) => {
        this.#waiting.push(resolve);
        request.signal.addEventListener('abort', () => resolve(), { once: true });
      });
    }
    return this.queue.splice(0, request.max);
  }
  async postChunk(_jobId: string, _chunk: StreamChunk): Promise<void> {}
  async postProgress(): Promise<void> {}
  postResult(jobId: string, result: JobResult): Promise<void> {
    return new Promise((resolve) => {
      this.posts.push({
        jobId,
        result,
        answer: () => {
          this.answered.set(jobId, result);
          resolve();
        },
      });
    });
  }
  setJobsInProgress(jobIds: readonly string[]): void {
    this.heartbeats.push([...jobIds]);
  }
  onStop(_listener: StopListener): () => void {
    return () => {};
  }
  async close(): Promise<void> {}

  /** Posts made and not yet answered. */
  get unanswered(): HeldPost[] {
    return this.posts.filter((post) => !this.answered.has(post.jobId));
  }
}

/** Let the runtime go as far as it can: a few turns of the event loop with nothing answered (no timers: in-process only). */
async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
}

let runtime: WorkerRuntime | undefined;
afterEach(async () => {
  const stopping = runtime?.stop();
  runtime = undefined;
  await stopping;
});

function start(transport: HandAnsweredTransport, concurrency: number, started: string[], refreshWorker = false): WorkerRuntime {
  const made = new WorkerRuntime(
    async (job) => {
      started.push(job.id);
      return (job.input as { i: number }).i;
    },
    resolveOptions({ concurrency, gpuSampling: false, refreshWorker }),
    transport,
    createLogger({ level: 'silent' }),
  );
  runtime = made;
  void made.start();
  return made;
}

describe('results posted in the background', () => {
  it('frees the slot while the result is posted, and keeps the job in the heartbeat until its post is answered', async () => {
    const transport = new HandAnsweredTransport(2);
    const started: string[] = [];
    const worker = start(transport, 1, started);
    await settle();
    // Concurrency 1: j0's post is pending, and j1 ran meanwhile.
    expect(started).toEqual(['j0', 'j1']);
    expect(transport.unanswered.map((post) => post.jobId)).toEqual(['j0', 'j1']);
    expect(worker.posting).toBe(1);
    expect(transport.heartbeats.at(-1)?.sort()).toEqual(['j0', 'j1']);
    expect(worker.runningJobIds.sort()).toEqual(['j0', 'j1']);
    transport.posts[0]?.answer();
    await settle();
    expect(transport.heartbeats.at(-1)).toEqual(['j1']);
    transport.posts[1]?.answer();
    await settle();
    expect(transport.heartbeats.at(-1)).toEqual([]);
    expect(worker.completed).toBe(2);
  });

  it('posts at most `concurrency` results in the background: past that no take asks for the slot, and one answered frees one', async () => {
    const transport = new HandAnsweredTransport(10);
    const started: string[] = [];
    const worker = start(transport, 2, started);
    await settle();
    // 2 posts in the background (slots free), then 2 runs that finished hold their slots: 4 jobs, no take pending.
    expect(started).toHaveLength(4);
    expect(transport.unanswered).toHaveLength(4);
    expect(worker.posting).toBe(2);
    expect(worker.running).toBe(4);
    expect(transport.takes.reduce((sum, max) => sum + max, 0)).toBe(4);
    expect(transport.heartbeats.at(-1)?.sort()).toEqual(['j0', 'j1', 'j2', 'j3']);
    // One background post answered: a held run moves to the background in its place, its slot is free, one more job.
    transport.posts[0]?.answer();
    await settle();
    expect(started).toHaveLength(5);
    expect(worker.posting).toBe(2);
    expect(transport.takes.at(-1)).toBe(1);
    // Answer everything as it comes: all 10 delivered, never more than 2 in the background.
    let peak = 0;
    while (transport.answered.size < 10) {
      peak = Math.max(peak, worker.posting);
      for (const post of transport.unanswered) post.answer();
      await settle();
    }
    expect(peak).toBeLessThanOrEqual(2);
    expect([...transport.answered.keys()].sort()).toEqual(Array.from({ length: 10 }, (_, i) => `j${i}`).sort());
  });

  it('does not run a job twice that is handed out again while its result is posted', async () => {
    const transport = new HandAnsweredTransport(1);
    transport.queue.push({ id: 'j0', input: { i: 0 } });
    const started: string[] = [];
    const worker = start(transport, 1, started);
    await settle();
    expect(started).toEqual(['j0']);
    expect(transport.queue).toEqual([]);
    expect(worker.running).toBe(1);
    transport.posts[0]?.answer();
    await settle();
    expect(started).toEqual(['j0']);
    expect(transport.posts).toHaveLength(1);
    expect(worker.completed).toBe(1);
  });

  it('keeps the slot of a result that asks for a new worker (refreshWorker) until its post is answered', async () => {
    const transport = new HandAnsweredTransport(2);
    const started: string[] = [];
    const worker = start(transport, 1, started, true);
    await settle();
    expect(started).toEqual(['j0']);
    expect(worker.posting).toBe(0);
    transport.posts[0]?.answer();
    await settle();
    expect(started).toEqual(['j0', 'j1']);
    transport.posts[1]?.answer();
    await settle();
    expect(worker.completed).toBe(2);
  });

  it('stop() waits for the posts still pending, the jobs listed until they are answered', async () => {
    const transport = new HandAnsweredTransport(1);
    const worker = start(transport, 1, []);
    await settle();
    expect(transport.unanswered.map((post) => post.jobId)).toEqual(['j0']);
    let stopped = false;
    const stopping = worker.stop().then(() => (stopped = true));
    await settle();
    expect(stopped).toBe(false);
    expect(worker.state).toBe('draining');
    expect(transport.heartbeats.at(-1)).toEqual(['j0']);
    transport.posts[0]?.answer();
    await stopping;
    expect(transport.answered.get('j0')).toEqual({ kind: 'output', output: 0 });
    expect(transport.heartbeats.at(-1)).toEqual([]);
  });
});
