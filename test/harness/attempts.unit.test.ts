/**
 * Attempts, the requeue cap, restarted streams and the drain of EndpointJobs (issue
 * 13), on a ManualClock: only the current attempt of a job changes it, a lost job is
 * requeued at most maxRequeues times, a requeued stream drops the lost attempt's chunks.
 */
import { describe, expect, it } from 'vitest';
import { Harness, ManualClock, type EndpointJobs, type HarnessOptions } from '../../src/harness/index.js';
import { parseJobRequest, type JobErrorPayload, type StopReason } from '../../src/job/index.js';
import { joinChunks } from '../../src/worker/join-chunks.js';

function setup(options: Omit<HarnessOptions, 'clock'> = {}) {
  const clock = new ManualClock();
  const harness = new Harness({ clock, ...options });
  const endpoint: EndpointJobs = harness.endpoint('ep');
  const stops: Array<[string, string, StopReason, number]> = [];
  endpoint.stopRequested.add((workerId, jobId, reason, attempt) => stops.push([workerId, jobId, reason, attempt]));
  return { clock, harness, endpoint, stops };
}

const request = (body: Record<string, unknown> = {}) => parseJobRequest({ input: { n: 1 }, ...body });

const failure: JobErrorPayload = { error_type: 'Error', error_message: 'boom', hostname: 'h', worker_id: 'w1', runtime_version: '0' };

describe('attempts', () => {
  it('hands out attempt 1, 2, ... and accepts chunks, progress and the result only from the current one', async () => {
    const { clock, endpoint, stops } = setup();
    const { id } = await endpoint.submit(request({ policy: { executionTimeout: 5_000 } }));
    expect((await endpoint.tryTake('w1', 1))[0]?.attempt).toBe(1);
    clock.advance(5_000); // the harness times attempt 1 out; its handler ignores the abort
    expect(stops).toEqual([['w1', id, 'timeout', 1]]);
    await endpoint.retry(id);
    // The same worker takes attempt 2 while attempt 1 still runs there.
    expect((await endpoint.tryTake('w1', 1))[0]?.attempt).toBe(2);
    expect(await endpoint.isStale(id, 1)).toBe(true);
    expect(await endpoint.isStale(id, 2)).toBe(false);
    expect(await endpoint.isStale(id, undefined)).toBe(false);
    expect(await endpoint.pushChunk(id, 'w1', { output: 'old' }, 1)).toBe(false);
    expect(await endpoint.progress(id, 'w1', 'old', 1)).toBe(false);
    // Attempt 1's late result is refused; the job is still attempt 2's.
    expect(await endpoint.complete(id, 'w1', { kind: 'error', error: failure, timedOut: true }, 1)).toEqual({
      applied: false,
      reason: 'stale_attempt',
      status: 'IN_PROGRESS',
    });
    expect((await endpoint.status(id)).status).toBe('IN_PROGRESS');
    expect(await endpoint.pushChunk(id, 'w1', { output: 'new' }, 2)).toBe(true);
    expect(await endpoint.complete(id, 'w1', { kind: 'output', output: 'attempt 2' }, 2)).toEqual({ applied: true, status: 'COMPLETED' });
    // The same post again is recognised; attempt 1's is still stale.
    expect(await endpoint.complete(id, 'w1', { kind: 'output', output: 'attempt 2' }, 2)).toMatchObject({ applied: true, repeated: true });
    expect(await endpoint.complete(id, 'w1', { kind: 'output', output: 'late' }, 1)).toMatchObject({ applied: false, reason: 'stale_attempt' });
    expect(await endpoint.status(id)).toMatchObject({ status: 'COMPLETED', output: 'attempt 2', retries: 1 });
  });

  /**
   * The ways attempt 1 of a job is replaced while its handler still runs on worker w1
   * (it ignored its abort, or was never told), after which w1 (concurrency 2) takes
   * attempt 2 beside it. A cancelled job is not among them: /retry takes only FAILED or
   * TIMED_OUT jobs (platform-api.md), so a cancelled attempt is never followed by another
   * (the test below).
   */
  const replacements = {
    'timed out, then /retry': async (endpoint: EndpointJobs, clock: ManualClock, id: string) => {
      clock.advance(5_000);
      await endpoint.retry(id);
    },
    'taken back as a lost take answer': async (endpoint: EndpointJobs, _clock: ManualClock, id: string) => {
      expect(await endpoint.requeueJob(id, 'w1')).toBe(true);
    },
    'taken back with its worker, taken for gone': async (endpoint: EndpointJobs) => {
      expect(await endpoint.requeueWorkerJobs('w1')).toHaveLength(1);
    },
  } as const;

  it.each(Object.keys(replacements) as Array<keyof typeof replacements>)(
    'attempt 1 %s: every interleaving of its late posts with attempt 2 on the same worker is refused (property-style)',
    async (way) => {
      // All orders of attempt 1's late posts around attempt 2's life, bounded.
      const posts = ['chunk1', 'progress1', 'result1', 'chunk2', 'result2'] as const;
      const orders: Array<Array<(typeof posts)[number]>> = [];
      const permute = (rest: Array<(typeof posts)[number]>, acc: Array<(typeof posts)[number]>): void => {
        if (rest.length === 0) {
          // Attempt 2 posts its chunk before its result, as a worker does.
          if (acc.indexOf('chunk2') < acc.indexOf('result2')) orders.push(acc);
          return;
        }
        for (const [i, post] of rest.entries()) permute([...rest.slice(0, i), ...rest.slice(i + 1)], [...acc, post]);
      };
      permute([...posts], []);
      expect(orders).toHaveLength(60);
      for (const order of orders) {
        const { clock, endpoint } = setup();
        const { id } = await endpoint.submit(request({ policy: { executionTimeout: 5_000 } }));
        await endpoint.tryTake('w1', 1);
        await replacements[way](endpoint, clock, id);
        expect((await endpoint.tryTake('w1', 1))[0]?.attempt).toBe(2);
        for (const post of order) {
          if (post === 'chunk1') expect(await endpoint.pushChunk(id, 'w1', { output: 'a1' }, 1)).toBe(false);
          if (post === 'progress1') expect(await endpoint.progress(id, 'w1', 'p1', 1)).toBe(false);
          if (post === 'result1')
            expect(await endpoint.complete(id, 'w1', { kind: 'output', output: 'from 1' }, 1)).toMatchObject({ applied: false, reason: 'stale_attempt' });
          if (post === 'chunk2') await endpoint.pushChunk(id, 'w1', { output: 'a2' }, 2);
          if (post === 'result2') expect((await endpoint.complete(id, 'w1', { kind: 'output', output: 'from 2' }, 2)).applied).toBe(true);
        }
        expect(await endpoint.status(id), order.join(' ')).toMatchObject({ status: 'COMPLETED', output: 'from 2', retries: 1 });
        expect((await endpoint.readStream(id)).stream.map((chunk) => chunk.output)).toEqual(['a2']);
      }
    },
  );

  it('a cancelled attempt is the last: /retry is refused, and its late posts change nothing', async () => {
    const { endpoint, stops } = setup();
    const { id } = await endpoint.submit(request());
    await endpoint.tryTake('w1', 1);
    await endpoint.cancel(id);
    expect(stops).toEqual([['w1', id, 'cancelled', 1]]);
    await expect(endpoint.retry(id)).rejects.toMatchObject({ code: 'SW_RETRY_NOT_ALLOWED' });
    // The handler ignored its abort and the worker (not ours: ours posts nothing for a cancelled run) posts anyway.
    expect(await endpoint.pushChunk(id, 'w1', { output: 'late' }, 1)).toBe(false);
    expect(await endpoint.progress(id, 'w1', 'late', 1)).toBe(false);
    expect(await endpoint.complete(id, 'w1', { kind: 'output', output: 'late' }, 1)).toMatchObject({ applied: false, reason: 'already_ended' });
    expect(await endpoint.tryTake('w1', 1)).toEqual([]);
    expect(await endpoint.status(id)).toMatchObject({ status: 'CANCELLED' });
    expect((await endpoint.status(id)).output).toBeUndefined();
  });

  it('refuses the posts of an attempt that was taken back while the job waits in the queue', async () => {
    const { endpoint } = setup();
    const { id } = await endpoint.submit(request());
    await endpoint.tryTake('w1', 1);
    // The worker was taken for gone, but it is alive and finishes attempt 1.
    await endpoint.requeueWorkerJobs('w1');
    expect(await endpoint.isStale(id, 1)).toBe(true);
    expect(await endpoint.complete(id, 'w1', { kind: 'output', output: 'from 1' }, 1)).toEqual({ applied: false, reason: 'stale_attempt', status: 'IN_QUEUE' });
    await endpoint.tryTake('w2', 1);
    expect(await endpoint.complete(id, 'w2', { kind: 'output', output: 'from 2' }, 2)).toMatchObject({ applied: true });
    expect(await endpoint.status(id)).toMatchObject({ status: 'COMPLETED', output: 'from 2' });
  });

  it('matches a worker that sends no attempt (the Python SDK) by worker id, as before', async () => {
    const { endpoint } = setup();
    const { id } = await endpoint.submit(request());
    await endpoint.tryTake('w1', 1);
    expect(await endpoint.complete(id, 'w2', { kind: 'output', output: 1 })).toMatchObject({ applied: false, reason: 'not_held_by_worker' });
    expect(await endpoint.complete(id, 'w1', { kind: 'output', output: 1 })).toMatchObject({ applied: true });
  });
});

describe('requeue cap', () => {
  it('requeues a lost job maxRequeues times, then ends it FAILED with SW_REQUEUE_LIMIT and the count', async () => {
    const { endpoint } = setup({ maxRequeues: 2 });
    const { id } = await endpoint.submit(request());
    for (let lost = 1; lost <= 2; lost++) {
      await endpoint.tryTake(`w${lost}`, 1);
      expect(await endpoint.requeueWorkerJobs(`w${lost}`)).toEqual([id]);
      expect(await endpoint.status(id)).toMatchObject({ status: 'IN_QUEUE', retries: lost });
    }
    await endpoint.tryTake('w3', 1);
    // A lost take answer counts the same as a dead worker.
    expect(await endpoint.requeueJob(id, 'w3')).toBe(false);
    const view = await endpoint.status(id);
    expect(view.status).toBe('FAILED');
    const error = JSON.parse(view.error as string) as JobErrorPayload;
    expect(error).toMatchObject({ error_code: 'SW_REQUEUE_LIMIT', error_type: 'RequeueLimitError', worker_id: 'w3' });
    expect(error.error_message).toContain('lost 3 times');
    expect(error.error_message).toContain('at most 2 times');
    expect((await endpoint.health()).jobs).toMatchObject({ failed: 1, retried: 2, inQueue: 0, inProgress: 0 });
    // /retry starts the count again.
    await endpoint.retry(id);
    await endpoint.tryTake('w4', 1);
    expect(await endpoint.requeueWorkerJobs('w4')).toEqual([id]);
    expect((await endpoint.status(id)).status).toBe('IN_QUEUE');
  });

  it('defaults to 3 requeues', async () => {
    const { endpoint } = setup();
    const { id } = await endpoint.submit(request());
    const requeued: boolean[] = [];
    for (let n = 1; n <= 4; n++) {
      await endpoint.tryTake(`w${n}`, 1);
      requeued.push(await endpoint.requeueJob(id, `w${n}`));
    }
    expect(requeued).toEqual([true, true, true, false]);
    expect((await endpoint.status(id)).status).toBe('FAILED');
  });
});

describe('restarted streams', () => {
  it('drops the lost attempt’s chunks; reads carry the attempt; joinChunks rebuilds exactly the final attempt', async () => {
    const { endpoint } = setup();
    const { id } = await endpoint.submit(request());
    await endpoint.tryTake('w1', 1);
    const seen = [];
    for (let i = 0; i < 8; i++) await endpoint.pushChunk(id, 'w1', { output: { i, from: 1 }, metrics: { stream_index: i } }, 1);
    const first = await endpoint.readStream(id);
    expect(first).toMatchObject({ status: 'IN_PROGRESS', attempt: 1, retries: 0 });
    seen.push(...first.stream);
    for (let i = 8; i < 10; i++) await endpoint.pushChunk(id, 'w1', { output: { i, from: 1 }, metrics: { stream_index: i } }, 1);
    await endpoint.requeueWorkerJobs('w1'); // its worker died: chunks 8 and 9 were never read
    const between = await endpoint.readStream(id);
    expect(between).toEqual({ status: 'IN_QUEUE', stream: [], attempt: 1, retries: 1 });
    await endpoint.tryTake('w2', 1);
    for (let i = 0; i < 20; i++) await endpoint.pushChunk(id, 'w2', { output: { i, from: 2 }, metrics: { stream_index: i } }, 2);
    const second = await endpoint.readStream(id);
    expect(second).toMatchObject({ attempt: 2, retries: 1 });
    expect(second.stream[0]?.metrics).toEqual({ stream_index: 0, attempt: 2 });
    seen.push(...second.stream);
    expect(seen).toHaveLength(28);
    expect(joinChunks(seen)).toEqual(Array.from({ length: 20 }, (_, i) => ({ i, from: 2 })));
  });
});

describe('drain', () => {
  it('stops handing out jobs, answers waiting takes, and reports what the in-memory store loses', async () => {
    const { harness, endpoint } = setup();
    const waiting = endpoint.take('w1', 1);
    const running = (await endpoint.submit(request())).id; // straight to the waiting worker
    expect((await waiting).map((job) => job.id)).toEqual([running]);
    const idle = endpoint.take('w2', 1);
    const drained = harness.drain(5_000);
    expect(await idle).toEqual([]);
    const queued = (await endpoint.submit(request())).id;
    expect(await endpoint.tryTake('w2', 1)).toEqual([]);
    expect(await endpoint.take('w2', 1)).toEqual([]);
    // The running job may still finish.
    await endpoint.complete(running, 'w1', { kind: 'output', output: 'done' });
    expect(await drained).toEqual({ running: 0, queued: 1 });
    expect((await endpoint.status(queued)).status).toBe('IN_QUEUE');
    expect(await harness.drain(0)).toEqual({ running: 0, queued: 1 });
  });
});
