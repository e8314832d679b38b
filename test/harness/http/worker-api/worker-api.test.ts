/**
 * The harness's worker API over real HTTP on 127.0.0.1: the URL shapes and answers
 * of worker-protocol.md section 1, result idempotence, error payloads as workers send
 * them (ours and the Python SDK's), chunk de-duplication, job-stop, heartbeat and
 * worker liveness, keys, and the variables a worker needs to join.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { Harness, ManualClock } from '../../../../src/harness/index.js';
import { formatWorkerEnv, workerEnvFor, workerErrorPayload } from '../../../../packages/platform/src/harness/worker-api/index.js';
import { parseJobRequest, type JobRequestInput } from '../../../../src/job/index.js';
import { waitFor, within } from '../../../kit/index.js';
import { startWorkerApiServer, type RunningWorkerApi, type StartOptions } from './worker-api-server.js';

const servers: RunningWorkerApi[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

async function start(options: StartOptions = {}): Promise<RunningWorkerApi> {
  const server = await startWorkerApiServer({ longPollMs: 300, ...options });
  servers.push(server);
  return server;
}

interface Answer {
  status: number;
  json: unknown;
  text: string;
}

async function call(server: RunningWorkerApi, method: 'GET' | 'POST', path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const init: RequestInit = { method, headers: { ...headers }, signal: AbortSignal.timeout(10_000) };
  if (body !== undefined) {
    init.body = typeof body === 'string' ? body : JSON.stringify(body);
    (init.headers as Record<string, string>)['content-type'] ??= 'application/json';
  }
  const response = await fetch(`${server.origin}/v2/ep${path}`, init);
  const text = await response.text();
  let json: unknown;
  try {
    json = text === '' ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, json, text };
}

const submit = async (server: RunningWorkerApi, request: JobRequestInput = { input: { n: 1 } }): Promise<string> =>
  (await server.harness.endpoint('ep').submit(parseJobRequest(request))).id;

const endpointOf = (server: RunningWorkerApi) => server.harness.endpoint('ep');

/** Submit a job and take it as `workerId` over HTTP. */
async function held(server: RunningWorkerApi, workerId = 'w1', request?: JobRequestInput): Promise<string> {
  const id = await submit(server, request);
  const answer = await call(server, 'GET', `/job-take/${workerId}?job_in_progress=0`);
  expect(answer.status).toBe(200);
  expect((answer.json as { id: string }).id).toBe(id);
  return id;
}

describe('job-take and job-take-batch', () => {
  it('answers 204 when no job arrives within the long poll, and counts the worker as idle', async () => {
    const server = await start();
    const answer = await call(server, 'GET', '/job-take/w1?job_in_progress=0');
    expect(answer.status).toBe(204);
    expect(answer.text).toBe('');
    expect((await endpointOf(server).health()).workers).toEqual({ idle: 1, running: 0 });
  });

  it('answers a queued job as JSON, with its request fields, and the worker holds it', async () => {
    const server = await start();
    const id = await submit(server, { input: { prompt: 'x' }, webhook: 'https://example.com/h', policy: { executionTimeout: 60_000 } });
    const answer = await call(server, 'GET', '/job-take/w1?job_in_progress=0');
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual({ id, input: { prompt: 'x' }, webhook: 'https://example.com/h', policy: { executionTimeout: 60_000 }, attempt: 1 });
    expect(await endpointOf(server).status(id)).toMatchObject({ status: 'IN_PROGRESS' });
    expect(typeof (await endpointOf(server).status(id)).delayTime).toBe('number');
    expect((await endpointOf(server).health()).workers).toEqual({ idle: 0, running: 1 });
  });

  it('holds the poll until a job arrives', async () => {
    const server = await start({ longPollMs: 10_000 });
    const pending = call(server, 'GET', '/job-take/w1');
    await sleep(100);
    const id = await submit(server);
    const answer = await within(pending, 'the held take', 5_000);
    expect((answer.json as { id: string }).id).toBe(id);
  });

  it('answers a batch as a JSON array of at most batch_size jobs', async () => {
    const server = await start();
    const ids = await Promise.all([submit(server), submit(server), submit(server)]);
    const answer = await call(server, 'GET', '/job-take-batch/w1?batch_size=2&job_in_progress=0');
    expect(answer.status).toBe(200);
    expect((answer.json as Array<{ id: string }>).map((job) => job.id)).toEqual(ids.slice(0, 2));
    const rest = await call(server, 'GET', '/job-take-batch/w1?batch_size=5&job_in_progress=1');
    expect((rest.json as Array<{ id: string }>).map((job) => job.id)).toEqual(ids.slice(2));
    expect((await call(server, 'GET', '/job-take-batch/w1?batch_size=5')).status).toBe(204);
  });

  it('refuses a malformed batch_size with 400 SW_INVALID_REQUEST naming it', async () => {
    const server = await start();
    const answer = await call(server, 'GET', '/job-take-batch/w1?batch_size=lots');
    expect(answer.status).toBe(400);
    expect(answer.json).toMatchObject({ error: { code: 'SW_INVALID_REQUEST' } });
    expect(answer.text).toContain('batch_size');
  });

  it('answers 404 SW_ENDPOINT_NOT_FOUND for an unknown endpoint when endpoints are not created on use', async () => {
    const server = await start({ harness: new Harness({ autoCreateEndpoints: false }) });
    const answer = await call(server, 'GET', '/job-take/w1');
    expect(answer.status).toBe(404);
    expect(answer.json).toMatchObject({ error: { code: 'SW_ENDPOINT_NOT_FOUND' } });
  });
});

describe('job-done', () => {
  it('completes the job with {output}; a repeated job-done is acknowledged and the first result stands', async () => {
    const server = await start();
    const id = await held(server);
    const first = await call(server, 'POST', `/job-done/w1/${id}?isStream=false`, { output: { answer: 42 } });
    expect(first).toMatchObject({ status: 200, json: { acknowledged: true, applied: true, status: 'COMPLETED' } });
    const again = await call(server, 'POST', `/job-done/w1/${id}?isStream=false`, { output: { answer: 42 } });
    // The same worker's result again (its answer was lost): recognised as the same result, not applied twice.
    expect(again).toMatchObject({ status: 200, json: { acknowledged: true, applied: true, repeated: true } });
    const otherWorker = await call(server, 'POST', `/job-done/w2/${id}?isStream=false`, { output: 'theirs' });
    expect(otherWorker).toMatchObject({ status: 200, json: { acknowledged: true, applied: false, reason: 'already_ended' } });
    const other = await call(server, 'POST', `/job-done/w1/${id}?isStream=false`, { output: 'different' });
    expect(other.status).toBe(200);
    expect(await endpointOf(server).status(id)).toMatchObject({ status: 'COMPLETED', output: { answer: 42 } });
    expect((await endpointOf(server).health()).jobs.completed).toBe(1);
  });

  it('fails the job with the error text our worker posts, parsed into the error payload', async () => {
    const server = await start();
    const id = await held(server);
    const payload = {
      error_type: 'TypeError',
      error_message: 'bad',
      error_traceback: 'TypeError: bad',
      error_code: 'SW_HANDLER_ERROR',
      hostname: 'h',
      worker_id: 'w1',
      runtime_version: '0.1.0',
    };
    await call(server, 'POST', `/job-done/w1/${id}?isStream=false`, { error: JSON.stringify(payload) });
    const view = await endpointOf(server).status(id);
    expect(view.status).toBe('FAILED');
    expect(JSON.parse(view.error as string)).toEqual(payload);
  });

  it('reads a Python SDK post: JSON sent as form-urlencoded, runpod_version in the error', async () => {
    const server = await start();
    const id = await held(server);
    const sdkError = {
      error_type: "<class 'ValueError'>",
      error_message: 'nope',
      error_traceback: 'Traceback...',
      hostname: 'pod-host',
      worker_id: 'pod-1',
      runpod_version: '1.7.0',
    };
    const answer = await call(server, 'POST', `/job-done/w1/${id}?isStream=false`, JSON.stringify({ error: JSON.stringify(sdkError) }), {
      'content-type': 'application/x-www-form-urlencoded',
      charset: 'utf-8',
    });
    expect(answer.status).toBe(200);
    const error = JSON.parse((await endpointOf(server).status(id)).error as string) as Record<string, unknown>;
    expect(error).toEqual({ ...sdkError, runtime_version: '1.7.0' });
  });

  it('keeps an error that is not JSON text as the error message', async () => {
    const server = await start();
    const id = await held(server);
    await call(server, 'POST', `/job-done/w1/${id}`, { error: 'handler: boom \ntraceback: ...' });
    expect(JSON.parse((await endpointOf(server).status(id)).error as string)).toEqual({
      error_type: 'WorkerError',
      error_message: 'handler: boom \ntraceback: ...',
      hostname: 'unknown',
      worker_id: 'w1',
      runtime_version: '',
    });
  });

  it('ends the job TIMED_OUT when the worker reports its own execution timeout', async () => {
    const server = await start();
    const id = await held(server);
    await call(server, 'POST', `/job-done/w1/${id}`, {
      error: JSON.stringify({ error_type: 'ServerlessWorkerError', error_code: 'SW_EXECUTION_TIMEOUT', error_message: 'late' }),
    });
    expect((await endpointOf(server).status(id)).status).toBe('TIMED_OUT');
  });

  it('treats {status: "IN_PROGRESS", output} as progress', async () => {
    const server = await start();
    const id = await held(server);
    const answer = await call(server, 'POST', `/job-done/w1/${id}?isStream=false`, { status: 'IN_PROGRESS', output: { percent: 40 } });
    expect(answer.json).toEqual({ acknowledged: true, applied: true });
    expect(await endpointOf(server).status(id)).toMatchObject({ status: 'IN_PROGRESS', output: { percent: 40 } });
  });

  it('acknowledges and ignores a result for a cancelled job, an unknown job, or a job of another worker', async () => {
    const server = await start();
    const cancelled = await held(server);
    await endpointOf(server).cancel(cancelled);
    expect((await call(server, 'POST', `/job-done/w1/${cancelled}`, { output: 1 })).json).toMatchObject({
      applied: false,
      reason: 'already_ended',
      status: 'CANCELLED',
    });
    expect((await call(server, 'POST', '/job-done/w1/nope', { output: 1 })).json).toMatchObject({ applied: false, reason: 'not_found' });
    const mine = await held(server, 'w1');
    expect((await call(server, 'POST', `/job-done/w2/${mine}`, { output: 1 })).json).toMatchObject({ applied: false, reason: 'not_held_by_worker' });
    expect((await endpointOf(server).status(mine)).status).toBe('IN_PROGRESS');
  });

  it('notes stopPod, and refuses a body that is not JSON with 400', async () => {
    const server = await start();
    const id = await held(server);
    await call(server, 'POST', `/job-done/w1/${id}?isStream=true`, { output: [], stopPod: true });
    expect(server.seen.stopPods).toEqual([{ endpointId: 'ep', workerId: 'w1', jobId: id }]);
    const bad = await call(server, 'POST', `/job-done/w1/${id}`, '{"output": ');
    expect(bad.status).toBe(400);
    expect(bad.json).toMatchObject({ error: { code: 'SW_INVALID_REQUEST' } });
  });
});

describe('job-done without output or error', () => {
  it('refuses {"foo": 1} (a typo of output) with 400 naming the key and what to send; the job keeps running', async () => {
    const server = await start();
    const id = await held(server);
    const typo = await call(server, 'POST', `/job-done/w1/${id}`, { foo: 1, stopPod: false });
    expect(typo.status).toBe(400);
    expect(typo.json).toMatchObject({ error: { code: 'SW_INVALID_REQUEST', details: { keys: ['foo'] } } });
    expect((typo.json as { error: { message: string } }).error.message).toContain('neither "output" nor "error" but "foo"');
    expect(await endpointOf(server).status(id)).toMatchObject({ status: 'IN_PROGRESS' });
    // A progress post needs neither: it is not a result.
    expect((await call(server, 'POST', `/job-done/w1/${id}`, { status: 'IN_PROGRESS', note: 1 })).status).toBe(200);
    expect((await call(server, 'POST', `/job-done/w1/${id}`, { output: 'fixed' })).status).toBe(200);
    expect(await endpointOf(server).status(id)).toMatchObject({ status: 'COMPLETED', output: 'fixed' });
  });

  it('completes with an explicit "output": null, with {} (an SDK drops an empty output) and with {"stopPod": true}', async () => {
    const server = await start();
    for (const body of [{ output: null }, {}, { stopPod: true }]) {
      const id = await held(server);
      const answer = await call(server, 'POST', `/job-done/w1/${id}`, body);
      expect(answer.status, JSON.stringify(body)).toBe(200);
      expect(await endpointOf(server).status(id), JSON.stringify(body)).toMatchObject({ status: 'COMPLETED' });
    }
  });
});

describe('job-stream', () => {
  it('stores chunks in order, stores a retried chunk (same stream_index) once, and ignores chunks of jobs not held', async () => {
    const server = await start();
    const id = await held(server);
    for (const index of [0, 1, 1, 2, 0]) {
      const answer = await call(server, 'POST', `/job-stream/w1/${id}?isStream=false`, { output: `t${index}`, metrics: { stream_index: index } });
      expect(answer.status).toBe(200);
    }
    await call(server, 'POST', `/job-stream/w1/${id}?isStream=false`, { output: 'no metrics' });
    const { stream } = await endpointOf(server).readStream(id);
    expect(stream).toEqual([
      { output: 't0', metrics: { stream_index: 0, attempt: 1 } },
      { output: 't1', metrics: { stream_index: 1, attempt: 1 } },
      { output: 't2', metrics: { stream_index: 2, attempt: 1 } },
      { output: 'no metrics', metrics: { attempt: 1 } },
    ]);
    expect((await call(server, 'POST', `/job-stream/w2/${id}`, { output: 'x' })).json).toMatchObject({ applied: false, reason: 'not_held_by_worker' });
  });
});

describe('job-stop', () => {
  it('answers 204 when nothing is to stop within the long poll', async () => {
    const server = await start();
    expect((await call(server, 'GET', '/job-stop/w1')).status).toBe(204);
  });

  it("answers a held poll at once when the worker's job is cancelled, with the reason", async () => {
    const server = await start({ longPollMs: 10_000 });
    const id = await held(server);
    const pending = call(server, 'GET', '/job-stop/w1');
    await sleep(100);
    await endpointOf(server).cancel(id);
    const answer = await within(pending, 'the job-stop answer', 5_000);
    expect(answer).toMatchObject({ status: 200, json: { jobsToStop: [id], reasons: { [id]: 'cancelled' } } });
  });

  it('keeps a stop that came between two polls for the next poll, and tells only its worker', async () => {
    const server = await start();
    const mine = await held(server, 'w1');
    const theirs = await held(server, 'w2');
    await endpointOf(server).cancel(mine);
    expect((await call(server, 'GET', '/job-stop/w2')).status).toBe(204);
    expect((await call(server, 'GET', '/job-stop/w1')).json).toEqual({ jobsToStop: [mine], reasons: { [mine]: 'cancelled' }, attempts: { [mine]: 1 } });
    expect((await call(server, 'GET', '/job-stop/w1')).status).toBe(204);
    expect((await endpointOf(server).status(theirs)).status).toBe('IN_PROGRESS');
  });
});

describe('ping and liveness', () => {
  it('records the heartbeat with comma-separated or repeated job_id', async () => {
    const server = await start();
    await call(server, 'GET', '/ping/w1?job_id=a%2Cb&runpod_version=0.1.0');
    await call(server, 'GET', '/ping/w2?job_id=c&job_id=d');
    await call(server, 'GET', '/ping/w3');
    expect(server.seen.pings.map(({ workerId, jobIds, version }) => ({ workerId, jobIds, version }))).toEqual([
      { workerId: 'w1', jobIds: ['a', 'b'], version: '0.1.0' },
      { workerId: 'w2', jobIds: ['c', 'd'], version: undefined },
      { workerId: 'w3', jobIds: [], version: undefined },
    ]);
    // w3 was first heard from by a ping listing no job, before any job-take: its init runs.
    expect((await endpointOf(server).health()).workers).toEqual({ idle: 2, running: 0 });
    expect(await endpointOf(server).workers.initializingCount()).toBe(1);
    await call(server, 'GET', '/job-take/w3?job_in_progress=0');
    expect((await endpointOf(server).health()).workers).toEqual({ idle: 3, running: 0 });
    expect(await endpointOf(server).workers.initializingCount()).toBe(0);
  });

  it("puts the jobs of a worker silent for missedPings x pingIntervalMs back in the queue, counted as retried (on the harness's clock)", async () => {
    const clock = new ManualClock();
    const server = await start({ harness: new Harness({ clock }), liveness: { pingIntervalMs: 100, missedPings: 3 } });
    const id = await held(server, 'silent');
    // Time moves only here: 50 ms of the harness's clock per step, "alive" pinging at each; sweeps run every 100 ms of it.
    for (let step = 0; step < 20 && server.seen.gone.length === 0; step++) {
      clock.advance(50);
      await call(server, 'GET', '/ping/alive');
    }
    await waitFor(() => server.seen.gone.length > 0, 'the silent worker declared gone');
    expect(server.seen.gone).toEqual([{ endpointId: 'ep', workerId: 'silent', requeued: [id], reason: 'silent' }]);
    expect(await endpointOf(server).status(id)).toMatchObject({ status: 'IN_QUEUE', retries: 1 });
    const health = await endpointOf(server).health();
    expect(health.jobs.retried).toBe(1);
    // "alive" only ever pinged (no job-take): counted as initializing, not idle.
    expect(health.workers).toEqual({ idle: 0, running: 0 });
    expect(await endpointOf(server).workers.initializingCount()).toBe(1);
    // Should the silent worker come back, job-stop tells it to drop the job others now run.
    expect((await call(server, 'GET', '/job-stop/silent')).json).toEqual({ jobsToStop: [id], reasons: { [id]: 'cancelled' }, attempts: {} });
  });

  it("declares gone a worker silent for the window although its job-stop and job-take polls are open (a frozen process keeps its sockets), on the harness's clock", async () => {
    const clock = new ManualClock();
    // The polls outlast the whole test: only the worker's own calls may keep it alive.
    const server = await start({ harness: new Harness({ clock }), longPollMs: 60_000, liveness: { pingIntervalMs: 50, missedPings: 2 } });
    const id = await held(server, 'frozen');
    clock.advance(10);
    const stopPoll = call(server, 'GET', '/job-stop/frozen').catch((error: unknown) => error);
    const takePoll = call(server, 'GET', '/job-take/frozen?job_in_progress=1').catch((error: unknown) => error);
    // Both polls have arrived once they marked the worker seen at the clock's new time.
    await waitFor(async () => (await endpointOf(server).workers.get('frozen'))?.lastSeenAt === clock.now(), 'the polls open');
    await sleep(50);
    const settle = async (): Promise<void> => {
      for (let i = 0; i < 50; i++) await Promise.resolve();
    };
    // Sweeps run every 33 ms of the clock; 20 steps of 50 ms is ten windows.
    for (let step = 0; step < 20 && server.seen.gone.length === 0; step++) {
      clock.advance(50);
      await settle();
    }
    await waitFor(() => server.seen.gone.length > 0, 'the silent worker declared gone with its polls open');
    expect(server.seen.gone).toEqual([{ endpointId: 'ep', workerId: 'frozen', requeued: [id], reason: 'silent' }]);
    // Its open job-take poll ends empty: it must not take back the job just requeued.
    expect(((await within(takePoll, "the frozen worker's take poll", 5_000)) as Answer).status).toBe(204);
    expect(await endpointOf(server).status(id)).toMatchObject({ status: 'IN_QUEUE', retries: 1 });
    await server.close();
    await within(stopPoll, 'the held stop poll', 5_000);
  });

  it('takes a worker that reports itself unhealthy as gone at once', async () => {
    const server = await start();
    const id = await held(server, 'sick');
    await call(server, 'GET', `/ping/sick?status=unhealthy&check=gpu&reason=${encodeURIComponent('no CUDA device')}`);
    expect(server.seen.unhealthy).toEqual([{ endpointId: 'ep', workerId: 'sick', check: 'gpu', reason: 'no CUDA device' }]);
    expect(server.seen.gone).toEqual([{ endpointId: 'ep', workerId: 'sick', requeued: [id], reason: 'unhealthy' }]);
    expect((await endpointOf(server).status(id)).status).toBe('IN_QUEUE');
  });
});

describe('api key and closing', () => {
  it('requires the key on every worker route when one is set, bare or Bearer', async () => {
    const server = await start({ apiKey: 'k-1' });
    expect((await call(server, 'GET', '/ping/w1')).status).toBe(401);
    expect((await call(server, 'GET', '/ping/w1', undefined, { authorization: 'wrong' })).status).toBe(401);
    expect((await call(server, 'GET', '/ping/w1', undefined, { authorization: 'k-1' })).status).toBe(200);
    expect((await call(server, 'GET', '/ping/w1', undefined, { authorization: 'Bearer k-1' })).status).toBe(200);
  });

  it('answers held polls when the server closes, so that close does not wait for them', async () => {
    const server = await startWorkerApiServer({ longPollMs: 60_000 });
    const take = call(server, 'GET', '/job-take/w1').catch((error: unknown) => error);
    const stop = call(server, 'GET', '/job-stop/w1').catch((error: unknown) => error);
    await sleep(100);
    await within(server.close(), 'server close with two held polls', 5_000);
    await within(Promise.all([take, stop]), 'the held polls', 5_000);
  });
});

describe('joining a harness', () => {
  it("gives the RUNPOD_WEBHOOK_* values in the platform's shapes", async () => {
    const expected = {
      RUNPOD_WEBHOOK_GET_JOB: 'http://127.0.0.1:8000/v2/my-ep/job-take/$ID?',
      RUNPOD_WEBHOOK_POST_OUTPUT: 'http://127.0.0.1:8000/v2/my-ep/job-done/$RUNPOD_POD_ID/$ID?',
      RUNPOD_WEBHOOK_POST_STREAM: 'http://127.0.0.1:8000/v2/my-ep/job-stream/$RUNPOD_POD_ID/$ID?',
      RUNPOD_WEBHOOK_PING: 'http://127.0.0.1:8000/v2/my-ep/ping/$RUNPOD_POD_ID',
      RUNPOD_PING_INTERVAL: '10000',
      RUNPOD_ENDPOINT_ID: 'my-ep',
    };
    expect(workerEnvFor('http://127.0.0.1:8000', 'my-ep')).toEqual(expected);
    expect(workerEnvFor('http://127.0.0.1:8000/v2/', 'my-ep')).toEqual(expected);
    expect(workerEnvFor('http://127.0.0.1:8000', 'my-ep', { apiKey: 'k', pingIntervalMs: 2_000 })).toMatchObject({
      RUNPOD_AI_API_KEY: 'k',
      RUNPOD_PING_INTERVAL: '2000',
    });
  });

  it('formats them for a shell (single quotes keep $ID) and for docker --env-file', async () => {
    const env = workerEnvFor('http://h:1', 'e', { apiKey: "it's" });
    const shell = formatWorkerEnv(env);
    expect(shell).toContain("export RUNPOD_WEBHOOK_GET_JOB='http://h:1/v2/e/job-take/$ID?'\n");
    expect(shell).toContain("export RUNPOD_AI_API_KEY='it'\\''s'\n");
    expect(formatWorkerEnv(env, 'dotenv')).toContain('RUNPOD_WEBHOOK_PING=http://h:1/v2/e/ping/$RUNPOD_POD_ID\n');
  });
});

describe('workerErrorPayload', () => {
  it('fills what a posted error lacks and keeps what it has', async () => {
    expect(workerErrorPayload('{"error_message": "m", "extra": [1]}', 'w')).toEqual({
      error_type: 'Error',
      error_message: 'm',
      hostname: 'unknown',
      worker_id: 'w',
      runtime_version: '',
      extra: [1],
    });
    expect(workerErrorPayload({ error_type: 'X', error_message: 7 }, 'w')).toMatchObject({
      error_type: 'X',
      error_message: '{"error_type":"X","error_message":7}',
    });
    expect(workerErrorPayload('"just a JSON string"', 'w')).toMatchObject({ error_type: 'WorkerError', error_message: '"just a JSON string"' });
  });
});
