/**
 * Platform mode end to end: real worker processes (serve() with the RUNPOD_WEBHOOK_*
 * variables of a harness) against the harness's worker API on 127.0.0.1. Every wait
 * is bounded; no assertion is about speed beyond a generous bound.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseJobRequest, type JobRequestInput } from '../../src/job/index.js';
import { startWorkerApiServer, type RunningWorkerApi, type StartOptions } from '../harness/http/worker-api/worker-api-server.js';
import { waitFor, within } from '../kit/index.js';
import { killAllWorkers, startWorkerProcess, type WorkerProcess } from './worker-process.js';

const ENDPOINT = 'procs';
/** Heartbeat period of the worker processes, ms: short, so that liveness is quick to test. */
const PING_MS = 200;
/** Start-up of a tsx child on a loaded machine. */
const START_BOUND_MS = 30_000;

let server: RunningWorkerApi | undefined;

afterEach(async () => {
  await killAllWorkers();
  await server?.close();
  server = undefined;
});

async function startServer(options: StartOptions = {}): Promise<RunningWorkerApi> {
  server = await startWorkerApiServer({ liveness: { pingIntervalMs: PING_MS, missedPings: 3 }, longPollMs: 5_000, ...options });
  return server;
}

function startWorker(running: RunningWorkerApi, workerId: string, extra: Record<string, string> = {}): WorkerProcess {
  return startWorkerProcess(workerId, { ...running.envFor(ENDPOINT, PING_MS), ...extra });
}

/** Wait until the harness has heard each worker's heartbeat. */
async function joined(running: RunningWorkerApi, ...workers: WorkerProcess[]): Promise<void> {
  for (const worker of workers) {
    await waitFor(
      () => running.seen.pings.some((ping) => ping.workerId === worker.workerId),
      `worker ${worker.workerId} to join (stderr: ${worker.stderr().slice(-1_000)})`,
      START_BOUND_MS,
    );
  }
}

const submit = async (running: RunningWorkerApi, request: JobRequestInput): Promise<string> =>
  (await running.harness.endpoint(ENDPOINT).submit(parseJobRequest(request))).id;

describe('worker processes on the platform transport', () => {
  it('two worker processes share one harness and every job is done exactly once', { timeout: 90_000 }, async () => {
    const running = await startServer();
    const a = startWorker(running, 'worker-a');
    const b = startWorker(running, 'worker-b');
    await joined(running, a, b);
    const endpoint = running.harness.endpoint(ENDPOINT);
    const ids = await Promise.all(Array.from({ length: 20 }, (_, tag) => submit(running, { input: { mode: 'sleep', ms: 50, tag } })));
    await waitFor(async () => (await endpoint.health()).jobs.completed === 20, 'twenty jobs completed', 60_000);
    for (const [tag, id] of ids.entries()) expect(await endpoint.status(id)).toMatchObject({ status: 'COMPLETED', output: { tag } });
    const applied = running.seen.results.filter((result) => result.ack.applied && result.ack.repeated !== true);
    expect(applied.map((result) => result.jobId).sort()).toEqual([...ids].sort());
    const starts = [...a.events, ...b.events].filter((event) => event.event === 'started').map((event) => event.jobId);
    expect(starts.sort()).toEqual([...ids].sort());
    expect(a.events.some((event) => event.event === 'started')).toBe(true);
    expect(b.events.some((event) => event.event === 'started')).toBe(true);
    expect((await endpoint.health()).jobs).toMatchObject({ completed: 20, failed: 0, retried: 0, inQueue: 0, inProgress: 0 });
    // SIGTERM: a graceful stop, exit code 0.
    a.child.kill('SIGTERM');
    b.child.kill('SIGTERM');
    expect((await within(a.exited, 'worker-a exit', 20_000)).code).toBe(0);
    expect((await within(b.exited, 'worker-b exit', 20_000)).code).toBe(0);
  });

  it('requeues the job of a worker killed with SIGKILL mid-job, and the other worker completes it', { timeout: 90_000 }, async () => {
    const running = await startServer();
    const a = startWorker(running, 'worker-a');
    const b = startWorker(running, 'worker-b');
    await joined(running, a, b);
    const endpoint = running.harness.endpoint(ENDPOINT);
    // Attempt 1 runs until its worker is killed; attempt 2, on the survivor, returns at once.
    const id = await submit(running, { input: { mode: 'sleep', msByAttempt: [60_000, 0] } });
    const started = await waitFor(
      () => [a, b].find((worker) => worker.events.some((event) => event.event === 'started' && event.jobId === id)),
      'the job to start',
      20_000,
    );
    const victim = started;
    const survivor = victim === a ? b : a;
    process.kill(victim.child.pid as number, 'SIGKILL');
    const view = await endpoint.waitForEnd(id, 30_000);
    expect(view).toMatchObject({ status: 'COMPLETED', retries: 1, output: { workerId: survivor.workerId } });
    expect(running.seen.gone).toContainEqual({ endpointId: ENDPOINT, workerId: victim.workerId, requeued: [id], reason: 'silent' });
    expect(survivor.events.some((event) => event.event === 'started' && event.jobId === id)).toBe(true);
    const health = await endpoint.health();
    expect(health.jobs).toMatchObject({ completed: 1, retried: 1 });
    // Only the survivor is counted now.
    expect(health.workers.idle + health.workers.running).toBe(1);
    expect(await endpoint.workers.get(victim.workerId)).toBeUndefined();
  });

  it('delivers a cancel to the running handler in the other process (job-stop long poll)', { timeout: 60_000 }, async () => {
    const running = await startServer();
    const worker = startWorker(running, 'worker-c');
    await joined(running, worker);
    const endpoint = running.harness.endpoint(ENDPOINT);
    const id = await submit(running, { input: { mode: 'wait-abort' } });
    await worker.waitForEvent((event) => event.event === 'started' && event.jobId === id, 'the handler to start');
    // Let the worker's job-stop poll open (it starts as the job starts).
    await waitFor(async () => (await endpoint.health()).workers.running === 1, 'the worker running the job');
    const cancelledAt = Date.now();
    await endpoint.cancel(id);
    // The issue asks for "within a second"; the bound here is generous for loaded CI machines.
    const aborted = await worker.waitForEvent((event) => event.event === 'aborted' && event.jobId === id, 'the handler to see the cancel', 3_000);
    expect(aborted.reason).toBe('SW_JOB_CANCELLED');
    console.info(`cancel reached the handler in the other process after ${aborted.at - cancelledAt} ms`);
    expect((await endpoint.status(id)).status).toBe('CANCELLED');
    // The worker goes on serving.
    const next = await submit(running, { input: { tag: 'after-cancel' } });
    expect(await endpoint.waitForEnd(next, 20_000)).toMatchObject({ status: 'COMPLETED', output: { tag: 'after-cancel', workerId: 'worker-c' } });
  });

  it('keeps the heartbeat going while a handler blocks the event loop', { timeout: 60_000 }, async () => {
    // A long silence bound, so that only the count of pings shows the rhythm (not a requeue).
    const running = await startServer({ liveness: { pingIntervalMs: PING_MS, missedPings: 100 } });
    const worker = startWorker(running, 'worker-d', { RUNPOD_PING_INTERVAL: '100' });
    await joined(running, worker);
    const endpoint = running.harness.endpoint(ENDPOINT);
    // The handler holds the event loop until the test has heard 10 pings naming its job, then lets it go.
    const releaseDir = mkdtempSync(join(tmpdir(), 'sw-block-'));
    const untilFile = join(releaseDir, 'release');
    const id = await submit(running, { input: { mode: 'block', untilFile } });
    try {
      await waitFor(
        () => running.seen.pings.filter((ping) => ping.workerId === 'worker-d' && ping.jobIds.includes(id)).length >= 10,
        '10 pings naming the job while its handler holds the event loop',
        30_000,
      );
      writeFileSync(untilFile, '');
      expect(await endpoint.waitForEnd(id, 30_000)).toMatchObject({ status: 'COMPLETED' });
    } finally {
      rmSync(releaseDir, { recursive: true, force: true });
    }
    const record = await endpoint.find(id);
    const startedAt = record?.startedAt as number;
    const endedAt = record?.endedAt as number;
    const during = running.seen.pings.filter((ping) => ping.workerId === 'worker-d' && ping.jobIds.includes(id) && ping.at > startedAt && ping.at < endedAt);
    console.info(`${during.length} pings with the job id arrived during the ${endedAt - startedAt} ms the handler held the event loop`);
    // A heartbeat on the main thread would send none while the loop is held (the wait above would time out).
    expect(during.length).toBeGreaterThanOrEqual(10);
  });

  it('drains the running job on SIGTERM and exits 0', { timeout: 60_000 }, async () => {
    const running = await startServer();
    const worker = startWorker(running, 'worker-e');
    await joined(running, worker);
    const endpoint = running.harness.endpoint(ENDPOINT);
    const id = await submit(running, { input: { mode: 'sleep', ms: 800, tag: 'drained' } });
    await worker.waitForEvent((event) => event.event === 'started' && event.jobId === id, 'the handler to start');
    worker.child.kill('SIGTERM');
    expect((await within(worker.exited, 'the worker exit', 20_000)).code).toBe(0);
    expect(await endpoint.status(id)).toMatchObject({ status: 'COMPLETED', output: { tag: 'drained' } });
  });
});

describe('start-up errors', () => {
  it.each([
    ['RUNPOD_PING_INTERVAL', { RUNPOD_PING_INTERVAL: 'often' }, 'whole number of milliseconds'],
    ['RUNPOD_WEBHOOK_POST_OUTPUT', { RUNPOD_WEBHOOK_POST_OUTPUT: '' }, 'is required'],
    ['RUNPOD_WEBHOOK_PING', { RUNPOD_WEBHOOK_PING: 'localhost:8000/ping' }, 'http:// or https:// URL'],
  ])('exits 1 with a clear error naming %s', { timeout: 60_000 }, async (name, bad, expected) => {
    const running = await startServer();
    const worker = startWorker(running, 'worker-bad', bad);
    const exit = await within(worker.exited, 'the worker exit', START_BOUND_MS);
    expect(exit.code).toBe(1);
    const line =
      worker
        .stderr()
        .split('\n')
        .find((text) => text.startsWith('serverless-worker: SW_INVALID_ENV')) ?? worker.stderr();
    expect(line).toContain('SW_INVALID_ENV');
    expect(line).toContain(name);
    expect(line).toContain(expected);
    expect(running.seen.pings).toEqual([]);
  });
});
