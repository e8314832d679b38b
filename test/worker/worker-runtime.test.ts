import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { Harness, ManualClock } from '../../src/harness/index.js';
import { parseJobRequest, type JobView } from '../../src/job/index.js';
import { startLocalWorker, type LocalWorker } from '../../src/local/local-worker.js';
import { createLogger } from '../../src/log/index.js';
import { joinChunks, resolveOptions, withMetrics, type Handler, type JobContext } from '../../src/worker/index.js';
import { waitFor } from '../kit/index.js';

const silent = createLogger({ level: 'silent' });
const running: LocalWorker[] = [];

function start(handler: Handler<unknown>, options: Record<string, unknown> = {}): LocalWorker {
  const local = startLocalWorker(handler, resolveOptions({ workerId: 'test-worker', ...options }), silent, new Harness());
  running.push(local);
  return local;
}

async function runOne(local: LocalWorker, input: Record<string, unknown> = {}, policy?: Record<string, number>): Promise<JobView> {
  const { id } = await local.endpoint.submit(parseJobRequest({ input, ...(policy ? { policy } : {}) }));
  return local.endpoint.waitForEnd(id, 20_000);
}

function errorOf(view: JobView): Record<string, unknown> {
  expect(typeof view.error).toBe('string');
  return JSON.parse(view.error as string) as Record<string, unknown>;
}

afterEach(async () => {
  for (const local of running.splice(0)) {
    await local.runtime.stop();
    await local.harness.close();
  }
});

describe('handler kinds', () => {
  it('runs an async function', async () => {
    const local = start(async (job) => ({ got: job.input }));
    expect(await runOne(local, { a: 1 })).toMatchObject({ status: 'COMPLETED', output: { got: { a: 1 } } });
  });

  it('runs a plain function', async () => {
    const local = start((job) => `plain ${String((job.input as { a: number }).a)}`);
    expect(await runOne(local, { a: 2 })).toMatchObject({ status: 'COMPLETED', output: 'plain 2' });
  });

  it('treats a returned array as one output, not a stream', async () => {
    const local = start(() => [1, 2, 3]);
    const view = await runOne(local);
    expect(view.output).toEqual([1, 2, 3]);
  });

  it('streams an async generator, chunk by chunk, with stream_index', async () => {
    const local = start(async function* () {
      yield 'a';
      yield withMetrics('b', { output_tokens: 2 });
      yield { c: 3 };
    });
    const { id } = await local.endpoint.submit(parseJobRequest({ input: {} }));
    const view = await local.endpoint.waitForEnd(id, 20_000);
    expect(view.status).toBe('COMPLETED');
    const { stream } = await local.endpoint.readStream(id);
    expect(stream.map((c) => c.output)).toEqual(['a', 'b', { c: 3 }]);
    expect(stream.map((c) => c.metrics?.stream_index)).toEqual([0, 1, 2]);
    expect(stream[1]?.metrics).toMatchObject({ output_tokens: 2 });
    expect(view.output).toBeUndefined();
  });

  it('streams a sync generator, and aggregates when asked', async () => {
    const local = start(
      function* () {
        yield 'x';
        yield 'y';
      },
      { aggregateStream: true },
    );
    expect((await runOne(local)).output).toEqual(['x', 'y']);
  });

  it('splits a yielded value over the chunk limit, and the parts join back', async () => {
    const text = 'héllo wörld 🎉 '.repeat(50);
    const local = start(
      async function* () {
        yield text;
      },
      { maxChunkBytes: 100 },
    );
    const { id } = await local.endpoint.submit(parseJobRequest({ input: {} }));
    await local.endpoint.waitForEnd(id, 20_000);
    const { stream } = await local.endpoint.readStream(id);
    expect(stream.length).toBeGreaterThan(5);
    for (const chunk of stream) expect(Buffer.byteLength(JSON.stringify(chunk.output))).toBeLessThanOrEqual(100);
    expect(joinChunks(stream)).toEqual([text]);
  });
});

describe('handler failures end the job FAILED and the worker keeps serving', () => {
  const cases: Array<[string, Handler<unknown>, Record<string, unknown>]> = [
    [
      'a thrown Error',
      () => {
        throw new TypeError('bad thing');
      },
      { error_type: 'TypeError', error_message: 'bad thing' },
    ],
    [
      'a thrown string',
      () => {
        throw 'just text';
      },
      { error_type: 'string', error_message: 'Handler threw a non-Error value: "just text"' },
    ],
    ['a rejected non-Error', () => Promise.reject(42), { error_type: 'number', error_message: 'Handler threw a non-Error value: 42' }],
    ['a BigInt output', async () => ({ n: 10n }), { error_code: 'SW_OUTPUT_NOT_SERIALIZABLE' }],
    [
      'a cyclic output',
      async () => {
        const a: Record<string, unknown> = {};
        a.self = a;
        return a;
      },
      { error_code: 'SW_OUTPUT_NOT_SERIALIZABLE' },
    ],
    [
      'a BigInt yield',
      async function* () {
        yield 1n;
      },
      { error_code: 'SW_OUTPUT_NOT_SERIALIZABLE' },
    ],
    [
      'a generator that throws midway',
      async function* () {
        yield 'ok';
        throw new RangeError('midway');
      },
      { error_type: 'RangeError' },
    ],
  ];

  it.each(cases)('%s', async (_name, handler, expected) => {
    let calls = 0;
    const local = start((job, ctx) => (calls++ === 0 ? handler(job, ctx) : 'next job fine'));
    const view = await runOne(local);
    expect(view.status).toBe('FAILED');
    const error = errorOf(view);
    expect(error).toMatchObject({ ...expected, worker_id: 'test-worker' });
    expect(typeof error.hostname).toBe('string');
    expect(typeof error.runtime_version).toBe('string');
    expect(await runOne(local)).toMatchObject({ status: 'COMPLETED', output: 'next job fine' });
  });

  it('includes the stack of a thrown Error', async () => {
    const local = start(() => {
      throw new Error('with stack');
    });
    expect(errorOf(await runOne(local)).error_traceback).toContain('with stack');
  });
});

describe('input validation', () => {
  it('fails bad input with the zod issues before the handler runs', async () => {
    let called = false;
    const local = start(
      () => {
        called = true;
        return 'ran';
      },
      { inputSchema: z.object({ prompt: z.string(), n: z.number().int().max(4) }) },
    );
    const view = await runOne(local, { n: 9 });
    expect(view.status).toBe('FAILED');
    const error = errorOf(view);
    expect(error.error_code).toBe('SW_INPUT_VALIDATION');
    expect(error.issues).toEqual([expect.objectContaining({ path: 'prompt' }), expect.objectContaining({ path: 'n', received: '9' })]);
    expect(called).toBe(false);
    expect(await runOne(local, { prompt: 'p', n: 1 })).toMatchObject({ status: 'COMPLETED', output: 'ran' });
  });
});

describe('execution timeout', () => {
  it('aborts a handler that honours its signal: TIMED_OUT, worker keeps serving', async () => {
    let reason: unknown;
    const local = start(
      async (job, ctx: JobContext) => {
        if ((job.input as { quick?: boolean }).quick) return 'quick';
        await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve()));
        reason = ctx.signal.reason;
        throw ctx.signal.reason;
      },
      { defaultExecutionTimeoutMs: 200, timeoutGraceMs: 2_000 },
    );
    const view = await runOne(local);
    expect(view.status).toBe('TIMED_OUT');
    expect(reason).toMatchObject({ code: 'SW_EXECUTION_TIMEOUT' });
    expect(errorOf(view).error_code).toBe('SW_EXECUTION_TIMEOUT');
    expect(await runOne(local, { quick: true })).toMatchObject({ status: 'COMPLETED' });
  });

  it('exits the worker when a handler ignores its signal past the grace period', async () => {
    const local = start(() => sleep(10_000).then(() => 'too late'), { defaultExecutionTimeoutMs: 200, timeoutGraceMs: 100 });
    const exited = local.runtime.start();
    const view = await runOne(local);
    expect(view.status).toBe('TIMED_OUT');
    expect(errorOf(view).error_message).toContain('ignored its abort signal');
    expect(await exited).toEqual({ reason: 'unresponsive-handler', exitCode: 1 });
  });

  it('uses the job policy’s executionTimeout over the option', async () => {
    let deadlineSpan = 0;
    const local = start((_job, ctx) => {
      deadlineSpan = ctx.deadline - Date.now();
      return 'ok';
    });
    await runOne(local, {}, { executionTimeout: 7_000 });
    expect(deadlineSpan).toBeGreaterThan(5_000);
    expect(deadlineSpan).toBeLessThanOrEqual(7_000);
  });
});

describe('cancel', () => {
  it('aborts a running handler with SW_JOB_CANCELLED and keeps serving', async () => {
    let reason: unknown;
    let started!: () => void;
    const startedPromise = new Promise<void>((resolve) => (started = resolve));
    const local = start(async (job, ctx) => {
      if ((job.input as { quick?: boolean }).quick) return 'quick';
      started();
      await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve()));
      reason = ctx.signal.reason;
      return 'stopped';
    });
    const { id } = await local.endpoint.submit(parseJobRequest({ input: {} }));
    await startedPromise;
    expect((await local.endpoint.cancel(id)).status).toBe('CANCELLED');
    await local.endpoint.waitForEnd(id, 1_000);
    for (let i = 0; i < 100 && reason === undefined; i++) await sleep(10);
    expect(reason).toMatchObject({ code: 'SW_JOB_CANCELLED' });
    expect((await local.endpoint.status(id)).status).toBe('CANCELLED');
    expect(await runOne(local, { quick: true })).toMatchObject({ status: 'COMPLETED' });
  });

  it('aborts a running handler whose ttl ends with SW_JOB_EXPIRED; the job is gone (404)', async () => {
    const clock = new ManualClock(Date.now());
    let reason: unknown;
    let started!: () => void;
    const startedPromise = new Promise<void>((resolve) => (started = resolve));
    const local = startLocalWorker(
      async (_job, ctx) => {
        started();
        await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve()));
        reason = ctx.signal.reason;
        return 'stopped';
      },
      resolveOptions({ workerId: 'test-worker' }),
      silent,
      new Harness({ clock }),
    );
    running.push(local);
    const { id } = await local.endpoint.submit(parseJobRequest({ input: {}, policy: { ttl: 10_000 } }));
    await startedPromise;
    clock.advance(10_000);
    for (let i = 0; i < 100 && reason === undefined; i++) await sleep(10);
    expect(reason).toMatchObject({ code: 'SW_JOB_EXPIRED', status: 410 });
    await expect(local.endpoint.status(id)).rejects.toThrow(expect.objectContaining({ code: 'SW_JOB_NOT_FOUND' }));
  });

  it('never runs a job cancelled while queued', async () => {
    const seen: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const local = start(async (job) => {
      seen.push(job.id);
      await gate;
      return 'done';
    });
    const first = (await local.endpoint.submit(parseJobRequest({ input: {} }))).id;
    const second = (await local.endpoint.submit(parseJobRequest({ input: {} }))).id;
    for (let i = 0; i < 100 && seen.length === 0; i++) await sleep(5);
    await local.endpoint.cancel(second);
    release();
    await local.endpoint.waitForEnd(first, 5_000);
    expect(seen).toEqual([first]);
  });
});

describe('concurrency', () => {
  async function peakWhileRunning(concurrency: unknown, jobs: number): Promise<{ peak: number; samples: number[] }> {
    let now = 0;
    let peak = 0;
    const samples: number[] = [];
    const local = start(
      async () => {
        now++;
        peak = Math.max(peak, now);
        samples.push(now);
        await sleep(5);
        now--;
        return 'ok';
      },
      { concurrency },
    );
    const ids = await Promise.all(Array.from({ length: jobs }, async () => (await local.endpoint.submit(parseJobRequest({ input: {} }))).id));
    const views = await Promise.all(ids.map((id) => local.endpoint.waitForEnd(id, 20_000)));
    expect(views.every((v) => v.status === 'COMPLETED')).toBe(true);
    return { peak, samples };
  }

  it('never runs more jobs at once than a fixed limit', async () => {
    const { peak } = await peakWhileRunning(3, 30);
    expect(peak).toBe(3);
  });

  it('re-evaluates a concurrency function as jobs finish, never exceeding its answer', async () => {
    const answers: number[] = [];
    const { peak, samples } = await peakWhileRunning(({ current }: { current: number }) => {
      const next = Math.min(current + 1, 4);
      answers.push(next);
      return next;
    }, 40);
    expect(peak).toBeLessThanOrEqual(4);
    expect(samples[0]).toBe(1);
    expect(peak).toBeGreaterThan(1);
    expect(answers.length).toBeGreaterThan(0);
  });

  it('validates platform transport settings with the options, naming the field', async () => {
    expect(resolveOptions({ platformTransport: { resultDeadlineMs: 60_000 } }).platformTransport?.resultDeadlineMs).toBe(60_000);
    expect(() => resolveOptions({ platformTransport: { resultDeadlineMs: -1 } })).toThrow(
      expect.objectContaining({ code: 'SW_INVALID_OPTIONS', message: expect.stringContaining('resultDeadlineMs') }),
    );
  });

  it('refuses an invalid concurrency option naming it', async () => {
    expect(() => resolveOptions({ concurrency: 0 })).toThrow(/concurrency/);
    expect(() => resolveOptions({ concurrency: 'many' })).toThrow(expect.objectContaining({ code: 'SW_INVALID_OPTIONS' }));
  });
});

describe('progress', () => {
  it('shows progress while running and ignores progress after the end', async () => {
    let ctxRef: JobContext | undefined;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const local = start(async (_job, ctx) => {
      ctxRef = ctx;
      ctx.progress({ percent: 50 });
      await gate;
      return 'final';
    });
    const { id } = await local.endpoint.submit(parseJobRequest({ input: {} }));
    for (let i = 0; i < 200 && (await local.endpoint.status(id)).output === undefined; i++) await sleep(5);
    expect(await local.endpoint.status(id)).toMatchObject({ status: 'IN_PROGRESS', output: { percent: 50 } });
    release();
    await local.endpoint.waitForEnd(id, 5_000);
    ctxRef?.progress({ percent: 99 });
    expect(await local.endpoint.status(id)).toMatchObject({ status: 'COMPLETED', output: 'final' });
  });
});

describe('stop', () => {
  it('waits for running jobs as long as the first stop asks; a later, shorter stop shortens that wait', async () => {
    let aborted: unknown;
    const local = start(
      (_job: unknown, ctx: JobContext) =>
        new Promise((_resolve, reject) => {
          ctx.signal.addEventListener('abort', () => {
            aborted = ctx.signal.reason;
            reject(ctx.signal.reason as Error);
          });
        }),
      { shutdownTimeoutMs: 3_600_000 },
    );
    const { id } = await local.endpoint.submit(parseJobRequest({ input: {} }));
    await waitFor(() => local.runtime.runningJobIds.includes(id), `job ${id} runs`, 20_000, 5);
    // A worker whose harness is gone: running jobs are never aborted by this stop.
    const stopped = local.runtime.stop('harness-gone', { runsWithinMs: Number.POSITIVE_INFINITY });
    await sleep(0);
    expect(local.runtime.runningJobIds).toEqual([id]);
    // Then SIGTERM from the harness that came back: its own, shorter drain applies to the stop under way.
    expect(local.runtime.stop('shutdown', { runsWithinMs: 0 })).toBe(stopped);
    expect(await stopped).toEqual({ reason: 'harness-gone', exitCode: 1 });
    expect(aborted).toMatchObject({ code: 'SW_WORKER_SHUTDOWN' });
    expect(errorOf(await local.endpoint.waitForEnd(id, 20_000))).toMatchObject({ error_code: 'SW_WORKER_SHUTDOWN' });
  });
});
