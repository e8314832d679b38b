/**
 * The routes about one job over real HTTP: /status (and ?ttl=), /status-sync,
 * /stream, /cancel, /retry. A ManualClock drives ttl and timeouts without waiting.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/harness/index.js';
import { startTestWorker, submit } from './helpers.js';
import { call, errorCode, startTestServer, type TestServer, waitFor } from '../../kit/index.js';

let running: TestServer | undefined;
let stopWorker: (() => Promise<void>) | undefined;

afterEach(async () => {
  await stopWorker?.();
  await running?.close();
  running = undefined;
  stopWorker = undefined;
});

describe('GET /status/{id}', () => {
  it('answers the job as the spec shows it', async () => {
    running = await startTestServer({}, { clock: new ManualClock() });
    const id = await submit(running.endpointUrl());
    const answer = await call('GET', `${running.endpointUrl()}/status/${id}`);
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual({ id, status: 'IN_QUEUE' });
  });

  it('404 SW_JOB_NOT_FOUND for an unknown job', async () => {
    running = await startTestServer();
    const answer = await call('GET', `${running.endpointUrl()}/status/nope`);
    expect(answer.status).toBe(404);
    expect(errorCode(answer)).toBe('SW_JOB_NOT_FOUND');
  });

  it('?ttl= sets the time to live: the job is deleted when it elapses, even while it runs (404)', async () => {
    const clock = new ManualClock();
    running = await startTestServer({}, { clock });
    const endpoint = running.harness.endpoint('ep');
    const id = await submit(running.endpointUrl());
    // A worker takes it: the job is running.
    expect((await endpoint.tryTake('worker-1', 1)).map((job) => job.id)).toEqual([id]);
    const set = await call('GET', `${running.endpointUrl()}/status/${id}?ttl=10000`);
    expect(set.json).toMatchObject({ id, status: 'IN_PROGRESS' });
    clock.advance(9_999);
    expect((await call('GET', `${running.endpointUrl()}/status/${id}`)).status).toBe(200);
    clock.advance(1);
    const gone = await call('GET', `${running.endpointUrl()}/status/${id}`);
    expect(gone.status).toBe(404);
    expect(errorCode(gone)).toBe('SW_JOB_NOT_FOUND');
  });

  it('policy.ttl deletes a running job when it elapses (404)', async () => {
    const clock = new ManualClock();
    running = await startTestServer({}, { clock });
    const id = await submit(running.endpointUrl(), { input: {}, policy: { ttl: 10_000 } });
    await running.harness.endpoint('ep').tryTake('worker-1', 1);
    clock.advance(10_000);
    expect((await call('GET', `${running.endpointUrl()}/status/${id}`)).status).toBe(404);
  });

  it('400 naming ttl and its range for a ttl out of range or not a number', async () => {
    running = await startTestServer({}, { clock: new ManualClock() });
    const id = await submit(running.endpointUrl());
    for (const ttl of ['5', 'abc', '604800001']) {
      const answer = await call('GET', `${running.endpointUrl()}/status/${id}?ttl=${ttl}`);
      expect(answer.status).toBe(400);
      expect(errorCode(answer)).toBe('SW_INVALID_REQUEST');
      expect((answer.json as { error: { message: string } }).error.message).toContain('ttl must be a whole number of milliseconds from 10000 to 604800000');
    }
  });
});

describe('GET /status-sync/{id}', () => {
  it('holds the request until the job ends', async () => {
    running = await startTestServer();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    stopWorker = startTestWorker(running.harness, async () => {
      await gate;
      return 'done';
    }).stop;
    const id = await submit(running.endpointUrl());
    const pending = call('GET', `${running.endpointUrl()}/status-sync/${id}?wait=60000`);
    await waitFor(async () => (await running!.harness.endpoint('ep').find(id))?.status === 'IN_PROGRESS', 'the job to start');
    release();
    expect((await pending).json).toMatchObject({ id, status: 'COMPLETED', output: 'done' });
  });

  it('answers the current status when the wait elapses first', async () => {
    const clock = new ManualClock();
    running = await startTestServer({}, { clock });
    const id = await submit(running.endpointUrl());
    const endpoint = running.harness.endpoint('ep');
    const pending = call('GET', `${running.endpointUrl()}/status-sync/${id}?wait=1000`);
    // The wait timer is armed once the request reached the store.
    await waitFor(() => clock.pendingTimers >= 2, 'the wait to start');
    clock.advance(1000);
    expect((await pending).json).toEqual({ id, status: (await endpoint.status(id)).status });
  });

  it('400 naming wait and its range', async () => {
    running = await startTestServer({}, { clock: new ManualClock() });
    const id = await submit(running.endpointUrl());
    const answer = await call('GET', `${running.endpointUrl()}/status-sync/${id}?wait=999`);
    expect(answer.status).toBe(400);
    expect((answer.json as { error: { message: string } }).error.message).toContain('wait must be a whole number of milliseconds from 1000 to 300000');
  });
});

describe('GET /stream/{id}', () => {
  it('answers {status, stream} with the chunks produced since the previous call', async () => {
    running = await startTestServer();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    stopWorker = startTestWorker(running.harness, async function* () {
      yield 'a';
      await gate;
      yield 'b';
      yield 'c';
    }).stop;
    const id = await submit(running.endpointUrl());
    const first = (await call('GET', `${running.endpointUrl()}/stream/${id}`)).json as { status: string; stream: Array<{ output: unknown }> };
    // attempt: which take of the job the chunks come from (a restarted stream shows a new one).
    expect(first).toEqual({ status: 'IN_PROGRESS', stream: [{ output: 'a', metrics: expect.objectContaining({ attempt: 1 }) }], attempt: 1 });
    release();
    const rest: unknown[] = [];
    let status = 'IN_PROGRESS';
    for (let i = 0; i < 100 && status !== 'COMPLETED'; i++) {
      const next = (await call('GET', `${running.endpointUrl()}/stream/${id}`)).json as { status: string; stream: Array<{ output: unknown }> };
      status = next.status;
      rest.push(...next.stream.map((chunk) => chunk.output));
    }
    expect(status).toBe('COMPLETED');
    expect(rest).toEqual(['b', 'c']);
    // Everything was handed out: a later call has nothing new.
    expect((await call('GET', `${running.endpointUrl()}/stream/${id}`)).json).toEqual({ status: 'COMPLETED', stream: [], attempt: 1 });
  });

  it('?wait=0 answers at once when nothing is new', async () => {
    running = await startTestServer({}, { clock: new ManualClock() });
    const id = await submit(running.endpointUrl());
    expect((await call('GET', `${running.endpointUrl()}/stream/${id}?wait=0`)).json).toEqual({ status: 'IN_QUEUE', stream: [], attempt: 0 });
  });

  it('404 for an unknown job', async () => {
    running = await startTestServer();
    expect((await call('GET', `${running.endpointUrl()}/stream/nope`)).status).toBe(404);
  });
});

describe('POST /cancel/{id}', () => {
  it('cancels a queued job: {id, status: CANCELLED}, then /status shows CANCELLED', async () => {
    running = await startTestServer({}, { clock: new ManualClock() });
    const id = await submit(running.endpointUrl());
    const answer = await call('POST', `${running.endpointUrl()}/cancel/${id}`);
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual({ id, status: 'CANCELLED' });
    expect((await call('GET', `${running.endpointUrl()}/status/${id}`)).json).toMatchObject({ status: 'CANCELLED' });
  });

  it('stops a running job on its worker', async () => {
    running = await startTestServer();
    let aborted = false;
    stopWorker = startTestWorker(running.harness, async (_job: unknown, ctx: { signal: AbortSignal }) => {
      await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve(), { once: true }));
      aborted = true;
      return 'stopped';
    }).stop;
    const id = await submit(running.endpointUrl());
    await waitFor(async () => (await running!.harness.endpoint('ep').find(id))?.status === 'IN_PROGRESS', 'the job to start');
    expect((await call('POST', `${running.endpointUrl()}/cancel/${id}`, { body: {} })).json).toEqual({ id, status: 'CANCELLED' });
    await waitFor(() => aborted, 'the handler to see its abort');
  });

  it('409 SW_CANCEL_NOT_ALLOWED for a job that already ended; 404 for an unknown one', async () => {
    running = await startTestServer({}, { clock: new ManualClock() });
    const endpoint = running.harness.endpoint('ep');
    const id = await submit(running.endpointUrl());
    await endpoint.tryTake('w', 1);
    await endpoint.complete(id, 'w', { kind: 'output', output: 1 });
    const answer = await call('POST', `${running.endpointUrl()}/cancel/${id}`);
    expect(answer.status).toBe(409);
    expect(errorCode(answer)).toBe('SW_CANCEL_NOT_ALLOWED');
    expect((await call('POST', `${running.endpointUrl()}/cancel/nope`)).status).toBe(404);
  });
});

describe('POST /retry/{id}', () => {
  const failure = { error_type: 'Error', error_message: 'boom', hostname: 'h', worker_id: 'w', runtime_version: '0' };

  it('puts a FAILED job back in the queue: same id, output removed', async () => {
    running = await startTestServer({}, { clock: new ManualClock() });
    const endpoint = running.harness.endpoint('ep');
    const id = await submit(running.endpointUrl());
    await endpoint.tryTake('w', 1);
    await endpoint.complete(id, 'w', { kind: 'error', error: failure });
    const answer = await call('POST', `${running.endpointUrl()}/retry/${id}`);
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual({ id, status: 'IN_QUEUE' });
    expect((await call('GET', `${running.endpointUrl()}/status/${id}`)).json).toEqual({ id, status: 'IN_QUEUE', retries: 1 });
  });

  it('puts a TIMED_OUT job back in the queue', async () => {
    const clock = new ManualClock();
    running = await startTestServer({}, { clock });
    const id = await submit(running.endpointUrl(), { input: {}, policy: { executionTimeout: 5_000 } });
    await running.harness.endpoint('ep').tryTake('w', 1);
    clock.advance(5_000);
    expect((await running.harness.endpoint('ep').status(id)).status).toBe('TIMED_OUT');
    expect((await call('POST', `${running.endpointUrl()}/retry/${id}`)).json).toEqual({ id, status: 'IN_QUEUE' });
  });

  it('409 SW_RETRY_NOT_ALLOWED in IN_QUEUE, IN_PROGRESS, COMPLETED and CANCELLED', async () => {
    running = await startTestServer({}, { clock: new ManualClock() });
    const endpoint = running.harness.endpoint('ep');
    const url = running.endpointUrl();
    const [inProgress, completed, queued, cancelled] = [await submit(url), await submit(url), await submit(url), await submit(url)];
    await endpoint.cancel(cancelled);
    expect((await endpoint.tryTake('w', 2)).map((job) => job.id)).toEqual([inProgress, completed]);
    await endpoint.complete(completed, 'w', { kind: 'output', output: 1 });
    for (const [id, status] of [
      [queued, 'IN_QUEUE'],
      [inProgress, 'IN_PROGRESS'],
      [completed, 'COMPLETED'],
      [cancelled, 'CANCELLED'],
    ] as const) {
      const answer = await call('POST', `${url}/retry/${id}`);
      expect(answer.status, status).toBe(409);
      expect(errorCode(answer)).toBe('SW_RETRY_NOT_ALLOWED');
      expect((answer.json as { error: { details: { status: string } } }).error.details.status).toBe(status);
    }
  });
});

describe('GET /status/{id} of a job that reported progress', () => {
  it('shows the last progress as output while it runs, and no output beside the error once FAILED, TIMED_OUT or CANCELLED', async () => {
    const clock = new ManualClock();
    running = await startTestServer({}, { clock });
    const url = running.endpointUrl();
    const release = new Map<string, () => void>();
    // ctx.progress, then wait: released, the handler throws; aborted (timeout, cancel), it rejects with the reason.
    stopWorker = startTestWorker(running.harness, async (job: { id: string }, ctx) => {
      ctx.progress({ step: 3, of: 10 });
      await new Promise<void>((resolve, reject) => {
        release.set(job.id, resolve);
        ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason));
      });
      throw new Error('step 4 failed');
    }).stop;
    const status = async (id: string) => (await call('GET', `${url}/status/${id}`)).json as Record<string, unknown>;
    const ends: Array<[string, (id: string) => Promise<void>]> = [
      ['FAILED', async (id) => release.get(id)?.()],
      ['TIMED_OUT', async () => clock.advance(10_000)],
      ['CANCELLED', async (id) => void (await call('POST', `${url}/cancel/${id}`))],
    ];
    for (const [end, stop] of ends) {
      const id = await submit(url, { input: {}, policy: { executionTimeout: 10_000 } });
      await waitFor(async () => (await status(id)).output !== undefined && release.has(id), `the progress of the job to end ${end}`);
      expect(await status(id)).toMatchObject({ id, status: 'IN_PROGRESS', output: { step: 3, of: 10 } });
      await stop(id);
      const ended = await waitFor(async () => {
        const view = await status(id);
        return view.status === end && (end === 'CANCELLED' || view.error !== undefined) ? view : undefined;
      }, `status ${end}`);
      expect(ended, end).not.toHaveProperty('output');
      if (end === 'FAILED') expect(String(ended.error)).toContain('step 4 failed');
      if (end === 'TIMED_OUT') expect(String(ended.error)).toContain('SW_EXECUTION_TIMEOUT');
    }
  });
});
