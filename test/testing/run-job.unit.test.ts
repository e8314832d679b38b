/**
 * serverless-worker/testing: a handler runs through the real worker runtime and an
 * in-process harness; the test gets the final record and the chunks.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import * as z from 'zod';
import { ManualClock, runJob, streamJob } from 'serverless-worker/testing';
import { withMetrics } from 'serverless-worker';
import type { Handler, ServeOptions } from 'serverless-worker';

afterEach(() => {
  vi.useRealTimers();
});

describe('runJob', () => {
  it('returns the final record of a completed job', async () => {
    const result = await runJob(async (job) => ({ echo: job.input }), { input: { message: 'hi' } });
    expect(result.status).toBe('COMPLETED');
    expect(result.output).toEqual({ echo: { message: 'hi' } });
    expect(result.record.id).toBe(result.id);
    expect(result.chunks).toEqual([]);
    expect(result.workerExitCode).toBe(0);
  });

  it('returns the chunks of a stream and the values they rejoin to, with the worker options applied', async () => {
    const big = 'x'.repeat(300);
    const result = await runJob(
      async function* () {
        yield 'a';
        yield withMetrics({ n: 1 }, { tokens: 1 });
        yield big;
      },
      { input: {} },
      { options: { aggregateStream: true, maxChunkBytes: 128 } },
    );
    expect(result.status).toBe('COMPLETED');
    expect(result.values).toEqual(['a', { n: 1 }, big]);
    // maxChunkBytes from the options splits the long string: more chunks than yields.
    expect(result.chunks.length).toBeGreaterThan(3);
    expect(result.chunks[1]?.metrics).toMatchObject({ tokens: 1 });
    expect(result.output).toEqual(['a', { n: 1 }, big]);
  });

  it('validates input with the options inputSchema: the handler does not run', async () => {
    const handler = vi.fn(async (job: { input: { prompt: string } }) => job.input.prompt);
    const result = await runJob(
      handler as Handler<{ prompt: string }>,
      // Typed unknown: checked at run time only (a literal of the wrong type does not compile: run-job-types.unit.test.ts).
      { input: { prompt: 42 } } as unknown,
      {
        options: { inputSchema: z.object({ prompt: z.string() }) },
      },
    );
    expect(result.status).toBe('FAILED');
    expect(result.error).toMatchObject({ error_code: 'SW_INPUT_VALIDATION' });
    expect(handler).not.toHaveBeenCalled();
  });

  it('reports a thrown error as the job error, with the test file in the traceback', async () => {
    const result = await runJob(
      async () => {
        throw new TypeError('bad prompt');
      },
      { input: {} },
    );
    expect(result.status).toBe('FAILED');
    expect(result.error).toMatchObject({ error_type: 'TypeError', error_message: 'bad prompt', error_code: 'SW_HANDLER_ERROR' });
    expect(String((result.error as { error_traceback?: string }).error_traceback)).toContain('run-job.unit.test.ts');
  });

  it('refuses bad options and a malformed request with their codes', async () => {
    await expect(runJob(async () => 1, { input: {} }, { options: { concurrency: 0 } })).rejects.toMatchObject({ code: 'SW_INVALID_OPTIONS' });
    await expect(runJob(async () => 1, { prompt: 'no input key' } as unknown)).rejects.toMatchObject({ code: 'SW_INVALID_JOB_REQUEST' });
    expect(() => streamJob(async () => 1, { input: 'not an object' })).toThrow(expect.objectContaining({ code: 'SW_INVALID_JOB_REQUEST' }));
  });
});

describe('runJob with state (options.init, settings.state)', () => {
  interface Model {
    readonly prefix: string;
    readonly loadedBy: number;
  }

  it('runs options.init once per call, before the job, and hands its value to the handler as ctx.state', async () => {
    let loads = 0;
    const events: string[] = [];
    // Typed state: Handler<Input, State> and ServeOptions<Input, State> (TS2345 before the fix).
    const handler: Handler<{ text: string }, Model> = async (job, ctx) => {
      events.push('job');
      return `${ctx.state.prefix}${job.input.text} (load ${ctx.state.loadedBy})`;
    };
    const options: ServeOptions<{ text: string }, Model> = {
      inputSchema: z.object({ text: z.string() }),
      init: async (ctx) => {
        events.push('init');
        expect(ctx.signal.aborted).toBe(false);
        loads += 1;
        return { prefix: '> ', loadedBy: loads };
      },
    };
    const first = await runJob(handler, { input: { text: 'a' } }, { options });
    expect(first).toMatchObject({ status: 'COMPLETED', output: '> a (load 1)' });
    const second = await runJob(handler, { input: { text: 'b' } }, { options });
    expect(second).toMatchObject({ status: 'COMPLETED', output: '> b (load 2)' });
    expect(events).toEqual(['init', 'job', 'init', 'job']);
  });

  it('streamJob runs init too; the chunks use the state', async () => {
    const handler: Handler<Record<string, unknown>, string[]> = async function* (_job, ctx) {
      yield* ctx.state;
    };
    const seen: unknown[] = [];
    const stream = streamJob(handler, { input: {} }, { options: { init: () => ['x', 'y'] } });
    for await (const chunk of stream) seen.push(chunk.output);
    expect(seen).toEqual(['x', 'y']);
    expect((await stream.result).status).toBe('COMPLETED');
  });

  it('settings.state replaces init: init does not run', async () => {
    const init = vi.fn((): Model => ({ prefix: 'real ', loadedBy: 1 }));
    const handler: Handler<Record<string, unknown>, Model> = (_job, ctx) => ctx.state.prefix;
    const result = await runJob(handler, { input: {} }, { options: { init }, state: { prefix: 'fake ', loadedBy: 0 } });
    expect(result).toMatchObject({ status: 'COMPLETED', output: 'fake ' });
    expect(init).not.toHaveBeenCalled();
  });

  it("a failing init rejects with SW_INIT_FAILED (init's error as cause) and the handler never runs", async () => {
    const handler = vi.fn(() => 'never');
    const failing = runJob(
      handler,
      { input: {} },
      {
        options: {
          init: () => {
            throw new Error('weights not found at /models/x');
          },
        },
      },
    );
    await expect(failing).rejects.toMatchObject({ code: 'SW_INIT_FAILED', message: expect.stringContaining('weights not found at /models/x') });
    await expect(failing).rejects.toHaveProperty('cause.message', 'weights not found at /models/x');
    expect(handler).not.toHaveBeenCalled();
  });

  it('an init past initTimeoutMs rejects with SW_INIT_TIMEOUT on the ManualClock', async () => {
    const clock = new ManualClock();
    let initStarted!: () => void;
    const started = new Promise<void>((resolve) => (initStarted = resolve));
    const slow = runJob(
      () => 'never',
      { input: {} },
      {
        clock,
        options: {
          initTimeoutMs: 1_000,
          init: ({ signal }) => {
            initStarted();
            return new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason)));
          },
        },
      },
    );
    await started;
    clock.advance(1_000);
    await expect(slow).rejects.toMatchObject({ code: 'SW_INIT_TIMEOUT' });
  });
});

describe('streamJob', () => {
  it('gives each chunk while the handler is still running', async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    const stream = streamJob(
      async function* () {
        yield 'first';
        await gate;
        yield 'second';
      },
      { input: {} },
    );
    const seen: unknown[] = [];
    for await (const chunk of stream) {
      seen.push(chunk.output);
      // The handler waits on the gate: the first chunk arrived before the job ended.
      if (seen.length === 1) release();
    }
    expect(seen).toEqual(['first', 'second']);
    expect((await stream.result).status).toBe('COMPLETED');
  });
});

describe('with fake timers', () => {
  it('a job that waits a minute completes without waiting, and an execution timeout fires when time is moved', async () => {
    vi.useFakeTimers();
    const waiting = runJob(
      async () => {
        await new Promise((resolve) => setTimeout(resolve, 60_000));
        return 'done';
      },
      { input: {} },
    );
    await vi.advanceTimersByTimeAsync(60_000);
    const done = await waiting;
    expect(done).toMatchObject({ status: 'COMPLETED', output: 'done' });
    expect(done.record.executionTime).toBeGreaterThanOrEqual(60_000);

    const stuck = runJob(async (_job, ctx) => new Promise((_resolve, reject) => ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason))), {
      input: {},
      policy: { executionTimeout: 5_000 },
    });
    await vi.advanceTimersByTimeAsync(5_000);
    const timedOut = await stuck;
    expect(timedOut.status).toBe('TIMED_OUT');
    expect(timedOut.error).toMatchObject({ error_code: 'SW_EXECUTION_TIMEOUT' });
  });

  it('takes a ManualClock for the harness timers', async () => {
    const clock = new ManualClock();
    const result = await runJob(async () => 'ok', { input: {} }, { clock });
    expect(result.status).toBe('COMPLETED');
    // The harness dated the job on the manual clock: no time passed.
    expect(result.record.delayTime).toBe(0);
  });

  it('one ManualClock moves the harness and the worker: the execution timeout fires on clock.advance', async () => {
    const clock = new ManualClock();
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const stuck = runJob(
      async (_job, ctx) => {
        started();
        return new Promise((_resolve, reject) => ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason)));
      },
      { input: {}, policy: { executionTimeout: 5_000 } },
      { clock },
    );
    await running;
    clock.advance(4_999);
    let ended = false;
    void stuck.then(() => (ended = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(ended).toBe(false);
    clock.advance(1);
    const timedOut = await stuck;
    expect(timedOut.status).toBe('TIMED_OUT');
    expect(timedOut.error).toMatchObject({ error_code: 'SW_EXECUTION_TIMEOUT' });
    expect(timedOut.record.executionTime).toBe(5_000);
  });
});
