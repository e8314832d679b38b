/**
 * A worker's result and its next take in one request (issue 47 item 6): job-take answers
 * advertise `x-sw-take-on-done: 1`; the SDK's worker then takes its next jobs on its
 * result post (`&take=N`), whose answer carries them in `jobs`. Over HTTP on 127.0.0.1,
 * the SDK's worker runtime and platform transport against the harness's worker API,
 * every request counted on the server: fewer than two a job, every job completed once;
 * a result post whose answer is lost after its jobs were taken loses no job (its retry
 * carries no take, the jobs come back through the heartbeat's reconcile); with the
 * advertisement off, no post carries `take`. Raw: the answer's shape, a bad `take`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { parseJobRequest, type Job } from '../../../../src/job/index.js';
import { createPlatformTransport } from '../../../../src/transports/platform/index.js';
import { WorkerRuntime, resolveOptions, type Handler } from '../../../../src/worker/index.js';
import { waitFor } from '../../../kit/index.js';
import { captureLogs } from '../../../transports/platform/log-capture.js';
import { startWorkerApiServer, type RunningWorkerApi, type StartOptions } from './worker-api-server.js';

const servers: RunningWorkerApi[] = [];
let runtime: WorkerRuntime | undefined;

afterEach(async () => {
  await runtime?.stop();
  runtime = undefined;
  for (const server of servers.splice(0)) await server.close();
});

const JOBS = 30;
const PING_MS = 100;

const echo: Handler<unknown> = (job) => ({ n: (job.input as { n: number }).n });

/** Every job-take and job-done request the server saw, as `METHOD url`. */
function countRequests(app: FastifyInstance, seen: string[]): void {
  app.addHook('onRequest', async (request) => {
    if (request.url.includes('/job-take') || request.url.includes('/job-done/')) seen.push(`${request.method} ${request.url}`);
  });
}

async function startServer(options: StartOptions, seen: string[], more?: (app: FastifyInstance) => void): Promise<RunningWorkerApi> {
  const server = await startWorkerApiServer({
    longPollMs: 300,
    ...options,
    beforeRoutes: (app) => {
      countRequests(app, seen);
      more?.(app);
    },
  });
  servers.push(server);
  return server;
}

async function submitJobs(server: RunningWorkerApi, count: number): Promise<string[]> {
  const endpoint = server.harness.endpoint('ep');
  const ids: string[] = [];
  for (let n = 0; n < count; n++) ids.push((await endpoint.submit(parseJobRequest({ input: { n } }))).id);
  return ids;
}

/** The SDK's worker (concurrency 1) against `server`; `heartbeat` with pings every PING_MS. */
function startWorker(server: RunningWorkerApi, heartbeat = false): void {
  const logs = captureLogs();
  const transport = createPlatformTransport({
    processEnv: { ...server.envFor('ep', PING_MS), RUNPOD_POD_ID: 'w1' },
    logger: logs.logger,
    heartbeat,
    emptyPollGapMs: 0,
    retryMinDelayMs: 5,
    retryMaxDelayMs: 20,
  });
  runtime = new WorkerRuntime(echo, resolveOptions({ gpuSampling: false }), transport, logs.logger, {});
  void runtime.start();
}

/** Waits until every job is COMPLETED with its output; answers how many results each job got applied. */
async function allCompleted(server: RunningWorkerApi, ids: readonly string[]): Promise<number[]> {
  const endpoint = server.harness.endpoint('ep');
  await waitFor(async () => {
    for (const id of ids) if ((await endpoint.find(id))?.status !== 'COMPLETED') return false;
    return true;
  }, 'every job COMPLETED');
  for (const [n, id] of ids.entries()) expect((await endpoint.find(id))?.output).toEqual({ n });
  // A repeated result (a retried post whose first answer was lost) is acknowledged as the same one: not counted.
  return ids.map((id) => server.seen.results.filter((result) => result.jobId === id && result.ack.applied && result.ack.repeated !== true).length);
}

describe('the SDK worker takes its next job on its result post', () => {
  it('makes fewer requests than two a job, and completes every job once', async () => {
    const seen: string[] = [];
    const server = await startServer({}, seen);
    const ids = await submitJobs(server, JOBS);
    startWorker(server);
    expect(await allCompleted(server, ids)).toEqual(ids.map(() => 1));
    const dones = seen.filter((line) => line.includes('/job-done/'));
    expect(dones).toHaveLength(JOBS);
    // Every result but the last took the next job; the last found none (and the worker then polls).
    expect(dones.filter((line) => /[?&]take=1&job_in_progress=1(&|$)/.test(line)).length).toBeGreaterThanOrEqual(JOBS - 1);
    const handedOnTakes = seen.filter((line) => line.includes('/job-take')).length;
    expect(dones.length + handedOnTakes).toBeLessThan(2 * JOBS);
  });

  it('loses no job when the answer of a result post that took one is lost: its retry takes none, the job comes back through the heartbeat', async () => {
    const seen: string[] = [];
    let lost = 0;
    const server = await startServer({ liveness: { pingIntervalMs: PING_MS, missedPings: 3 } }, seen, (app) => {
      app.addHook('onSend', async (request, reply, payload) => {
        // The fifth result post's answer, after its result was stored and a job taken for it: the connection closes instead.
        if (request.url.includes('take=') && typeof payload === 'string' && payload.includes('"jobs":[{') && ++lost === 5) reply.raw.socket?.destroy();
        return payload;
      });
    });
    const ids = await submitJobs(server, 12);
    startWorker(server, true);
    expect(await allCompleted(server, ids)).toEqual(ids.map(() => 1));
    expect(lost).toBeGreaterThanOrEqual(5);
    // The lost answer's job went back to the queue and ran again, as attempt 2.
    const attempts = await Promise.all(ids.map(async (id) => (await server.harness.endpoint('ep').find(id))?.attempt));
    expect(attempts.filter((attempt) => attempt === 2)).toHaveLength(1);
    // The post whose answer was lost came again, without a take.
    const dones = seen.filter((line) => line.includes('/job-done/'));
    const twice = ids.filter((id) => dones.filter((line) => line.includes(`/${id}?`)).length === 2);
    expect(twice).toHaveLength(1);
    const [first, retry] = dones.filter((line) => line.includes(`/${twice[0] as string}?`));
    expect(first).toContain('take=');
    expect(retry).not.toContain('take=');
  });

  it('sends no take with its results when the harness does not advertise it', async () => {
    const seen: string[] = [];
    const server = await startServer({ takeOnDone: false }, seen);
    const ids = await submitJobs(server, 10);
    startWorker(server);
    expect(await allCompleted(server, ids)).toEqual(ids.map(() => 1));
    const dones = seen.filter((line) => line.includes('/job-done/'));
    expect(dones).toEqual(ids.map((id) => `POST /v2/ep/job-done/w1/${id}?isStream=false&attempt=1`));
    expect(seen.filter((line) => line.includes('/job-take')).length).toBeGreaterThanOrEqual(10);
  });
});

describe('job-done with take, raw', () => {
  async function takeOne(server: RunningWorkerApi): Promise<{ job: Job; take: Response }> {
    const take = await fetch(`${server.origin}/v2/ep/job-take/w1?job_in_progress=0`);
    return { job: (await take.json()) as Job, take };
  }
  const done = (server: RunningWorkerApi, id: string, query: string) =>
    fetch(`${server.origin}/v2/ep/job-done/w1/${id}?isStream=false&attempt=1${query}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ output: 'ok' }),
    });

  it('answers the acknowledgement with the jobs queued, at most N, with the headers of a job-take answer', async () => {
    const server = await startServer({}, []);
    const ids = await submitJobs(server, 4);
    const { job, take } = await takeOne(server);
    expect(take.headers.get('x-sw-take-on-done')).toBe('1');
    const answer = await done(server, job.id, '&take=2&job_in_progress=1');
    expect(answer.status).toBe(200);
    expect(answer.headers.get('x-sw-take-on-done')).toBe('1');
    expect(answer.headers.get('x-sw-stream-order')).toBe('stream_index');
    const body = (await answer.json()) as { acknowledged: boolean; applied: boolean; jobs: Job[] };
    expect(body).toMatchObject({ acknowledged: true, applied: true });
    expect(body.jobs.map((taken) => [taken.id, taken.input, taken.attempt])).toEqual([
      [ids[1], { n: 1 }, 1],
      [ids[2], { n: 2 }, 1],
    ]);
    const endpoint = server.harness.endpoint('ep');
    expect((await endpoint.find(ids[0] as string))?.status).toBe('COMPLETED');
    expect((await endpoint.find(ids[1] as string))?.status).toBe('IN_PROGRESS');
    // The same result again (a retry) takes no more jobs unless it asks.
    const again = (await (await done(server, job.id, '')).json()) as Record<string, unknown>;
    expect(again).toMatchObject({ acknowledged: true, applied: true, repeated: true });
    expect(again).not.toHaveProperty('jobs');
    expect((await endpoint.find(ids[3] as string))?.status).toBe('IN_QUEUE');
  });

  it('answers no jobs when none is queued, at once', async () => {
    const server = await startServer({}, []);
    await submitJobs(server, 1);
    const { job } = await takeOne(server);
    const body = (await (await done(server, job.id, '&take=4&job_in_progress=0')).json()) as { jobs: Job[] };
    expect(body.jobs).toEqual([]);
  });

  it('refuses a bad take with 400 SW_INVALID_REQUEST, the job left running', async () => {
    const server = await startServer({}, []);
    await submitJobs(server, 1);
    const { job } = await takeOne(server);
    const answer = await done(server, job.id, '&take=0');
    expect(answer.status).toBe(400);
    expect(((await answer.json()) as { error: { code: string } }).error.code).toBe('SW_INVALID_REQUEST');
    expect((await server.harness.endpoint('ep').find(job.id))?.status).toBe('IN_PROGRESS');
  });

  it('ignores take, and advertises nothing, with takeOnDone off', async () => {
    const server = await startServer({ takeOnDone: false }, []);
    await submitJobs(server, 2);
    const { job, take } = await takeOne(server);
    expect(take.headers.get('x-sw-take-on-done')).toBeNull();
    const body = (await (await done(server, job.id, '&take=1')).json()) as Record<string, unknown>;
    expect(body).toMatchObject({ acknowledged: true, applied: true });
    expect(body).not.toHaveProperty('jobs');
  });
});
