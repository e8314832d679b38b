import { describe, expect, it } from 'vitest';
import { Harness, ManualClock, type EndpointJobs } from '../../src/harness/index.js';
import { parseJobRequest, type JobErrorPayload, type StopReason } from '../../src/job/index.js';

const MINUTE = 60_000;

function setup(): { clock: ManualClock; endpoint: EndpointJobs; stops: Array<[string, string, StopReason]> } {
  const clock = new ManualClock();
  const harness = new Harness({ clock });
  const endpoint = harness.endpoint('ep');
  const stops: Array<[string, string, StopReason]> = [];
  endpoint.stopRequested.add((workerId, jobId, reason) => stops.push([workerId, jobId, reason]));
  return { clock, endpoint, stops };
}

const request = (body: Record<string, unknown> = {}) => parseJobRequest({ input: { n: 1 }, ...body });

const failure: JobErrorPayload = {
  error_type: 'Error',
  error_message: 'boom',
  hostname: 'h',
  worker_id: 'w1',
  runtime_version: '0',
};

describe('EndpointJobs: submit, take, result', () => {
  it('queues a job, hands it to a worker, records delayTime and executionTime', async () => {
    const { clock, endpoint } = setup();
    const { id, status } = await endpoint.submit(request());
    expect(status).toBe('IN_QUEUE');
    expect(id).not.toMatch(/^sync-/);
    clock.advance(250);
    const [job] = await endpoint.tryTake('w1', 5);
    expect(job).toEqual({ id, input: { n: 1 }, attempt: 1 });
    expect((await endpoint.status(id)).status).toBe('IN_PROGRESS');
    clock.advance(1_000);
    expect(await endpoint.complete(id, 'w1', { kind: 'output', output: { ok: true } })).toEqual({ applied: true, status: 'COMPLETED' });
    expect(await endpoint.status(id)).toEqual({ id, status: 'COMPLETED', delayTime: 250, executionTime: 1_000, output: { ok: true } });
  });

  it('gives synchronous submissions sync- ids', async () => {
    const { endpoint } = setup();
    expect((await endpoint.submit(request(), { sync: true })).id).toMatch(/^sync-[0-9a-f-]{36}$/);
  });

  it('takes in arrival order and at most max jobs', async () => {
    const { endpoint } = setup();
    const ids = await Promise.all([1, 2, 3].map(async () => (await endpoint.submit(request())).id));
    expect((await endpoint.tryTake('w1', 2)).map((j) => j.id)).toEqual(ids.slice(0, 2));
    expect((await endpoint.tryTake('w2', 2)).map((j) => j.id)).toEqual(ids.slice(2));
    expect(await endpoint.tryTake('w3', 2)).toEqual([]);
  });

  it('long-polls: a waiting take gets the next submitted job; an aborted one gets []', async () => {
    const { endpoint } = setup();
    const waiting = endpoint.take('w1', 1);
    const { id } = await endpoint.submit(request());
    expect((await waiting).map((j) => j.id)).toEqual([id]);
    const controller = new AbortController();
    const aborted = endpoint.take('w1', 1, controller.signal);
    controller.abort();
    expect(await aborted).toEqual([]);
    // The aborted waiter must not swallow the next job.
    const next = await endpoint.submit(request());
    expect((await endpoint.tryTake('w2', 1)).map((j) => j.id)).toEqual([next.id]);
  });

  it('delivers the request fields unchanged', async () => {
    const { endpoint } = setup();
    const body = {
      webhook: 'http://127.0.0.1:1/h',
      policy: { executionTimeout: 9_000 },
      s3Config: { accessId: 'a', accessSecret: 's', bucketName: 'b', endpointUrl: 'http://e' },
    };
    await endpoint.submit(request(body));
    expect((await endpoint.tryTake('w1', 1))[0]).toMatchObject(body);
  });

  it('keeps a failed job error as JSON text, like the platform', async () => {
    const { endpoint } = setup();
    const { id } = await endpoint.submit(request());
    await endpoint.tryTake('w1', 1);
    await endpoint.complete(id, 'w1', { kind: 'error', error: failure });
    const view = await endpoint.status(id);
    expect(view.status).toBe('FAILED');
    expect(JSON.parse(view.error as string)).toEqual(failure);
  });

  it('acknowledges and ignores results for ended, unknown, or other workers’ jobs', async () => {
    const { endpoint } = setup();
    const { id } = await endpoint.submit(request());
    await endpoint.tryTake('w1', 1);
    expect(await endpoint.complete(id, 'w2', { kind: 'output', output: 1 })).toMatchObject({ applied: false, reason: 'not_held_by_worker' });
    await endpoint.complete(id, 'w1', { kind: 'output', output: 1 });
    // The same worker's result again (its answer was lost) is recognised; the first one stands.
    expect(await endpoint.complete(id, 'w1', { kind: 'output', output: 2 })).toMatchObject({ applied: true, repeated: true });
    expect(await endpoint.complete(id, 'w2', { kind: 'output', output: 2 })).toMatchObject({ applied: false, reason: 'already_ended' });
    expect((await endpoint.status(id)).output).toBe(1);
    expect(await endpoint.complete('nope', 'w1', { kind: 'output', output: 1 })).toMatchObject({ applied: false, reason: 'not_found' });
  });

  it('shows progress output while running and keeps stream chunks for readers', async () => {
    const { endpoint } = setup();
    const { id } = await endpoint.submit(request());
    await endpoint.tryTake('w1', 1);
    await endpoint.progress(id, 'w1', { step: 1 });
    expect((await endpoint.status(id)).output).toEqual({ step: 1 });
    await endpoint.pushChunk(id, 'w1', { output: 'a', metrics: { stream_index: 0 } });
    await endpoint.pushChunk(id, 'w1', { output: 'b', metrics: { stream_index: 1 } });
    // Each chunk carries the attempt that produced it; each read, the job's attempt and retries.
    expect(await endpoint.readStream(id)).toEqual({
      status: 'IN_PROGRESS',
      stream: [
        { output: 'a', metrics: { stream_index: 0, attempt: 1 } },
        { output: 'b', metrics: { stream_index: 1, attempt: 1 } },
      ],
      attempt: 1,
      retries: 0,
    });
    await endpoint.pushChunk(id, 'w1', { output: 'c' });
    expect((await endpoint.readStream(id)).stream).toEqual([{ output: 'c', metrics: { attempt: 1 } }]);
    await endpoint.complete(id, 'w1', { kind: 'output', output: null });
    expect(await endpoint.readStream(id)).toEqual({ status: 'COMPLETED', stream: [], attempt: 1, retries: 0 });
    expect(await endpoint.pushChunk(id, 'w1', { output: 'late' })).toBe(false);
  });
});

describe('EndpointJobs: cancel, retry, purge', () => {
  it('removes a cancelled queued job before it starts', async () => {
    const { endpoint, stops } = setup();
    const { id } = await endpoint.submit(request());
    expect((await endpoint.cancel(id)).status).toBe('CANCELLED');
    expect(await endpoint.tryTake('w1', 1)).toEqual([]);
    expect(stops).toEqual([]);
    expect((await endpoint.cancel(id)).status).toBe('CANCELLED');
  });

  it('tells the worker of a cancelled running job to stop', async () => {
    const { endpoint, stops } = setup();
    const { id } = await endpoint.submit(request());
    await endpoint.tryTake('w1', 1);
    expect((await endpoint.cancel(id)).status).toBe('CANCELLED');
    expect(stops).toEqual([['w1', id, 'cancelled']]);
    expect(await endpoint.complete(id, 'w1', { kind: 'output', output: 1 })).toMatchObject({ applied: false, reason: 'already_ended' });
  });

  it('refuses to cancel a finished job', async () => {
    const { endpoint } = setup();
    const { id } = await endpoint.submit(request());
    await endpoint.tryTake('w1', 1);
    await endpoint.complete(id, 'w1', { kind: 'output', output: 1 });
    await expect(endpoint.cancel(id)).rejects.toThrow(expect.objectContaining({ code: 'SW_CANCEL_NOT_ALLOWED' }));
  });

  it('retries a FAILED job: same id and input, output removed, counted', async () => {
    const { endpoint } = setup();
    const { id } = await endpoint.submit(request());
    await endpoint.tryTake('w1', 1);
    await endpoint.pushChunk(id, 'w1', { output: 'x' });
    await endpoint.complete(id, 'w1', { kind: 'error', error: failure });
    expect(await endpoint.retry(id)).toEqual({ id, status: 'IN_QUEUE', retries: 1 });
    expect((await endpoint.readStream(id)).stream).toEqual([]);
    expect(await endpoint.tryTake('w2', 1)).toEqual([{ id, input: { n: 1 }, attempt: 2 }]);
    await endpoint.complete(id, 'w2', { kind: 'output', output: 'second time' });
    expect(await endpoint.status(id)).toMatchObject({ status: 'COMPLETED', output: 'second time', retries: 1 });
    expect((await endpoint.health()).jobs).toMatchObject({ retried: 1, completed: 1, failed: 1 });
  });

  it('retries a TIMED_OUT job', async () => {
    const { clock, endpoint } = setup();
    const { id } = await endpoint.submit(request({ policy: { executionTimeout: 5_000 } }));
    await endpoint.tryTake('w1', 1);
    clock.advance(5_000);
    expect((await endpoint.retry(id)).status).toBe('IN_QUEUE');
  });

  it.each(['IN_QUEUE', 'IN_PROGRESS', 'COMPLETED', 'CANCELLED'] as const)('refuses retry from %s', async (state) => {
    const { endpoint } = setup();
    const { id } = await endpoint.submit(request());
    if (state !== 'IN_QUEUE') await endpoint.tryTake('w1', 1);
    if (state === 'COMPLETED') await endpoint.complete(id, 'w1', { kind: 'output', output: 1 });
    if (state === 'CANCELLED') await endpoint.cancel(id);
    expect((await endpoint.status(id)).status).toBe(state);
    await expect(endpoint.retry(id)).rejects.toThrow(expect.objectContaining({ code: 'SW_RETRY_NOT_ALLOWED' }));
  });

  it('purges only queued jobs and answers how many', async () => {
    const { endpoint } = setup();
    const running = (await endpoint.submit(request())).id;
    await endpoint.tryTake('w1', 1);
    const queued = await Promise.all([1, 2, 3].map(async () => (await endpoint.submit(request())).id));
    expect(await endpoint.purgeQueue()).toBe(3);
    expect((await endpoint.status(running)).status).toBe('IN_PROGRESS');
    for (const id of queued) await expect(endpoint.status(id)).rejects.toThrow(expect.objectContaining({ code: 'SW_JOB_NOT_FOUND' }));
    expect(await endpoint.purgeQueue()).toBe(0);
  });
});

describe('EndpointJobs: timers with injected time', () => {
  it('times out a running job at its policy’s executionTimeout and tells its worker', async () => {
    const { clock, endpoint, stops } = setup();
    const { id } = await endpoint.submit(request({ policy: { executionTimeout: 5_000 } }));
    await endpoint.tryTake('w1', 1);
    clock.advance(4_999);
    expect((await endpoint.status(id)).status).toBe('IN_PROGRESS');
    clock.advance(1);
    const view = await endpoint.status(id);
    expect(view.status).toBe('TIMED_OUT');
    expect(JSON.parse(view.error as string)).toMatchObject({ error_code: 'SW_EXECUTION_TIMEOUT' });
    expect(stops).toEqual([['w1', id, 'timeout']]);
  });

  it('uses the default 10 min execution timeout when the policy has none', async () => {
    const { clock, endpoint } = setup();
    const { id } = await endpoint.submit(request());
    await endpoint.tryTake('w1', 1);
    clock.advance(10 * MINUTE - 1);
    expect((await endpoint.status(id)).status).toBe('IN_PROGRESS');
    clock.advance(1);
    expect((await endpoint.status(id)).status).toBe('TIMED_OUT');
  });

  it('maps a worker-reported timeout to TIMED_OUT', async () => {
    const { endpoint } = setup();
    const { id } = await endpoint.submit(request());
    await endpoint.tryTake('w1', 1);
    await endpoint.complete(id, 'w1', { kind: 'error', error: failure, timedOut: true });
    expect((await endpoint.status(id)).status).toBe('TIMED_OUT');
  });

  it('deletes a queued job when its ttl elapses (then not found)', async () => {
    const { clock, endpoint } = setup();
    const { id } = await endpoint.submit(request({ policy: { ttl: 10_000 } }));
    clock.advance(9_999);
    expect((await endpoint.status(id)).status).toBe('IN_QUEUE');
    clock.advance(1);
    await expect(endpoint.status(id)).rejects.toThrow(expect.objectContaining({ code: 'SW_JOB_NOT_FOUND', status: 404 }));
    expect(await endpoint.tryTake('w1', 1)).toEqual([]);
  });

  it('deletes a running job when its ttl elapses, counting queue time, and tells its worker', async () => {
    const { clock, endpoint, stops } = setup();
    const { id } = await endpoint.submit(request({ policy: { ttl: 20_000, executionTimeout: 60_000 } }));
    clock.advance(15_000);
    await endpoint.tryTake('w1', 1);
    clock.advance(5_000);
    await expect(endpoint.status(id)).rejects.toThrow(expect.objectContaining({ code: 'SW_JOB_NOT_FOUND' }));
    expect(stops).toEqual([['w1', id, 'expired']]);
    expect(await endpoint.complete(id, 'w1', { kind: 'output', output: 1 })).toMatchObject({ applied: false, reason: 'not_found' });
  });

  it('setTtl gives a job a new time to live from now', async () => {
    const { clock, endpoint } = setup();
    const { id } = await endpoint.submit(request({ policy: { ttl: 10_000 } }));
    clock.advance(5_000);
    await endpoint.setTtl(id, 60_000);
    clock.advance(59_999);
    expect((await endpoint.status(id)).status).toBe('IN_QUEUE');
    clock.advance(1);
    await expect(endpoint.status(id)).rejects.toThrow(expect.objectContaining({ code: 'SW_JOB_NOT_FOUND' }));
  });

  it.each([
    ['an asynchronous job', {}, 30 * MINUTE],
    ['a synchronous job', { sync: true }, MINUTE],
    ['a synchronous job with the default wait (90 s)', { sync: true, waitMs: 90_000 }, MINUTE],
    ['a synchronous job that waited 3 min', { sync: true, waitMs: 3 * MINUTE }, 3 * MINUTE],
    ['a synchronous job that waited 5 min', { sync: true, waitMs: 300_000 }, 5 * MINUTE],
    ['a synchronous job that waited 10 s', { sync: true, waitMs: 10_000 }, MINUTE],
  ])('keeps %s for its retention after it ends', async (_name, options, retentionMs) => {
    const { clock, endpoint } = setup();
    const { id } = await endpoint.submit(request(), options);
    await endpoint.tryTake('w1', 1);
    clock.advance(1_000);
    await endpoint.complete(id, 'w1', { kind: 'output', output: 1 });
    clock.advance(retentionMs - 1);
    expect((await endpoint.status(id)).status).toBe('COMPLETED');
    clock.advance(1);
    await expect(endpoint.status(id)).rejects.toThrow(expect.objectContaining({ code: 'SW_JOB_NOT_FOUND' }));
  });

  it('ttl still deletes a finished job before its retention ends', async () => {
    const { clock, endpoint } = setup();
    const { id } = await endpoint.submit(request({ policy: { ttl: 60_000 } }));
    await endpoint.tryTake('w1', 1);
    await endpoint.complete(id, 'w1', { kind: 'output', output: 1 });
    clock.advance(60_000);
    await expect(endpoint.status(id)).rejects.toThrow(expect.objectContaining({ code: 'SW_JOB_NOT_FOUND' }));
  });

  it('waitForEnd resolves on the end, or with the current view when its wait elapses', async () => {
    const { clock, endpoint } = setup();
    const a = (await endpoint.submit(request())).id;
    const waitA = endpoint.waitForEnd(a, 90_000);
    await endpoint.tryTake('w1', 1);
    await endpoint.complete(a, 'w1', { kind: 'output', output: 'done' });
    expect(await waitA).toMatchObject({ status: 'COMPLETED', output: 'done' });
    const b = (await endpoint.submit(request())).id;
    const waitB = endpoint.waitForEnd(b, 1_000);
    clock.advance(1_000);
    expect(await waitB).toEqual({ id: b, status: 'IN_QUEUE' });
  });

  it('leaves no timers behind once jobs are gone', async () => {
    const { clock, endpoint } = setup();
    const { id } = await endpoint.submit(request());
    await endpoint.tryTake('w1', 1);
    await endpoint.complete(id, 'w1', { kind: 'output', output: 1 });
    clock.advance(30 * MINUTE);
    expect(clock.pendingTimers).toBe(0);
  });
});

describe('EndpointJobs: health and workers', () => {
  it('counts jobs and workers as /health shows them', async () => {
    const { endpoint } = setup();
    const a = (await endpoint.submit(request())).id;
    const b = (await endpoint.submit(request())).id;
    await endpoint.submit(request());
    await endpoint.tryTake('w1', 1);
    await endpoint.tryTake('w2', 1);
    await endpoint.workers.touch('w3', {}, 0);
    expect(await endpoint.health()).toEqual({
      jobs: { completed: 0, failed: 0, inProgress: 2, inQueue: 1, retried: 0 },
      workers: { idle: 1, running: 2 },
    });
    await endpoint.complete(a, 'w1', { kind: 'output', output: 1 });
    await endpoint.complete(b, 'w2', { kind: 'error', error: failure });
    expect(await endpoint.health()).toEqual({
      jobs: { completed: 1, failed: 1, inProgress: 0, inQueue: 1, retried: 0 },
      workers: { idle: 3, running: 0 },
    });
  });

  it('requeues the jobs of a vanished worker, counted as retried', async () => {
    const { endpoint } = setup();
    const { id } = await endpoint.submit(request());
    await endpoint.tryTake('w1', 1);
    expect(await endpoint.requeueWorkerJobs('w1')).toEqual([id]);
    expect(await endpoint.status(id)).toEqual({ id, status: 'IN_QUEUE', retries: 1 });
    expect((await endpoint.health()).jobs.retried).toBe(1);
    expect((await endpoint.tryTake('w2', 1)).map((j) => j.id)).toEqual([id]);
  });

  it('refuses an unknown endpoint when endpoints are not auto-created', async () => {
    const harness = new Harness({ autoCreateEndpoints: false, endpoints: ['known'] });
    expect(harness.endpoint('known').id).toBe('known');
    expect(() => harness.endpoint('other')).toThrow(expect.objectContaining({ code: 'SW_ENDPOINT_NOT_FOUND' }));
  });
});
