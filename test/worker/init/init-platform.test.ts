/**
 * The start-up phase (serve's init) in real worker processes on the platform transport
 * against a harness on 127.0.0.1: the state reaches jobs, /health shows the worker
 * initializing then idle (and /metrics has the init duration), a failed or timed-out
 * init is reported once (check=init) and the process exits 1, SIGTERM during init aborts
 * it and exits 0. Bounded waits only.
 */
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { Harness } from '../../../src/exports/harness.js';
import { createHarnessServer, type HarnessServer } from '../../../packages/platform/src/index.js';
import { workerEnvFor } from '../../../packages/platform/src/harness/worker-api/index.js';
import { startWorkerApiServer, type RunningWorkerApi } from '../../harness/http/worker-api/worker-api-server.js';
import { killAllWorkers, startWorkerProcess } from '../../platform/worker-process.js';
import { waitFor, within } from '../../kit/index.js';

const FIXTURE = fileURLToPath(new URL('../../fixtures/workers/init-worker.ts', import.meta.url));
const ENDPOINT = 'init-ep';
const PING_MS = 200;
/** Start-up of a tsx child on a loaded machine. */
const START_BOUND_MS = 30_000;

let server: HarnessServer | undefined;
let workerApi: RunningWorkerApi | undefined;

afterEach(async () => {
  await killAllWorkers();
  await server?.close();
  await server?.config.harness.close();
  server = undefined;
  await workerApi?.close();
  workerApi = undefined;
});

interface HealthBody {
  workers: { idle: number; running: number; initializing: number; ready: number };
}

async function health(url: string): Promise<HealthBody> {
  const response = await fetch(`${url}/v2/${ENDPOINT}/health`);
  return (await response.json()) as HealthBody;
}

describe('serve(handler, { init }) on the platform transport', () => {
  it('shows the worker as initializing in /health during init, then idle, and hands the state to every job', { timeout: 90_000 }, async () => {
    server = await createHarnessServer({ harness: new Harness(), port: 0 });
    const worker = startWorkerProcess(
      'init-ok',
      {
        ...workerEnvFor(server.url, ENDPOINT, { pingIntervalMs: PING_MS }),
        INIT_DELAY_MS: '3000',
        LOG_LEVEL: 'info',
        SERVERLESS_WORKER_METRICS_PORT: '0',
        SERVERLESS_WORKER_METRICS_HOST: '127.0.0.1',
      },
      FIXTURE,
    );
    await worker.waitForEvent((event) => event.event === 'init-started', 'init to start', START_BOUND_MS);
    const during = await waitFor(
      async () => {
        const body = await health(server!.url);
        return body.workers.initializing === 1 ? body : undefined;
      },
      `/health to show the worker initializing (stderr: ${worker.stderr().slice(-1_000)})`,
      10_000,
    );
    expect(during.workers).toMatchObject({ initializing: 1, idle: 0, running: 0, ready: 0 });
    const after = await waitFor(
      async () => {
        const body = await health(server!.url);
        return body.workers.idle === 1 ? body : undefined;
      },
      'the worker to become idle after init',
      30_000,
    );
    expect(after.workers).toMatchObject({ initializing: 0, idle: 1, ready: 1 });
    const endpoint = server.config.harness.endpoint(ENDPOINT);
    for (const tag of [1, 2]) {
      const { id } = await endpoint.submit({ input: { tag } });
      const view = await endpoint.waitForEnd(id, 20_000);
      expect(view).toMatchObject({ status: 'COMPLETED', output: { state: { model: 'tiny', loadedBy: 'init-ok' }, input: { tag } } });
    }
    const line = /init finished in (\d+) ms/.exec(worker.stderr());
    expect(line, 'the log line with the init duration').not.toBeNull();
    const measured = Number(line?.[1]);
    console.log(`init of the fixture (a 3000 ms wait) measured ${measured} ms`);
    expect(measured).toBeGreaterThanOrEqual(2_900);
    // The same duration in /metrics, labelled by outcome.
    const metricsUrl = await waitFor(
      () => /metrics served at (http:\/\/127\.0\.0\.1:\d+\/metrics)/.exec(worker.stderr())?.[1],
      'the metrics URL in the log',
      10_000,
    );
    const scraped = await (await fetch(metricsUrl)).text();
    const seconds = Number(/^serverless_worker_init_duration_seconds\{outcome="ok"\} (\S+)$/m.exec(scraped)?.[1]);
    console.log(`init duration in /metrics: ${seconds} s`);
    expect(seconds).toBeGreaterThanOrEqual(2.9);
    expect(scraped).not.toMatch(/serverless_worker_init_duration_seconds\{outcome="(failed|timed_out|aborted)"\}/);
    worker.signal('SIGTERM');
    expect((await within(worker.exited, 'the worker to exit', 20_000)).code).toBe(0);
  });

  it('reports a failed init once through the heartbeat (check=init) and exits 1, taking no job', { timeout: 60_000 }, async () => {
    workerApi = await startWorkerApiServer({ liveness: { pingIntervalMs: PING_MS, missedPings: 3 } });
    const endpoint = workerApi.harness.endpoint(ENDPOINT);
    const { id } = await endpoint.submit({ input: { never: 'taken' } });
    const worker = startWorkerProcess(
      'init-fail',
      { ...workerApi.envFor(ENDPOINT, PING_MS), INIT_MODE: 'fail', INIT_DELAY_MS: '200', LOG_LEVEL: 'info' },
      FIXTURE,
    );
    const exit = await within(worker.exited, 'the worker to exit', START_BOUND_MS);
    expect(exit.code).toBe(1);
    expect(workerApi.seen.unhealthy).toHaveLength(1);
    expect(workerApi.seen.unhealthy[0]).toMatchObject({ workerId: 'init-fail', check: 'init' });
    expect(workerApi.seen.unhealthy[0]?.reason).toContain('model file missing: /models/tiny.bin');
    expect((await endpoint.status(id)).status).toBe('IN_QUEUE');
    await worker.waitForStderr('SW_INIT_FAILED');
    await worker.waitForStderr('start-up failed: init failed: model file missing');
  });

  it('aborts an init past initTimeoutMs, reports it (check=init) and exits 1', { timeout: 60_000 }, async () => {
    workerApi = await startWorkerApiServer({ liveness: { pingIntervalMs: PING_MS, missedPings: 3 } });
    const worker = startWorkerProcess('init-slow', { ...workerApi.envFor(ENDPOINT, PING_MS), INIT_MODE: 'hang', INIT_TIMEOUT_MS: '800' }, FIXTURE);
    const exit = await within(worker.exited, 'the worker to exit', START_BOUND_MS);
    expect(exit.code).toBe(1);
    expect(worker.events.find((event) => event.event === 'init-aborted')?.reason).toBe('SW_INIT_TIMEOUT');
    expect(workerApi.seen.unhealthy).toEqual([
      { endpointId: ENDPOINT, workerId: 'init-slow', check: 'init', reason: 'init did not finish within initTimeoutMs (800 ms)' },
    ]);
    expect(workerApi.seen.results).toEqual([]);
  });

  it('SIGTERM during init aborts it (reason SW_WORKER_SHUTDOWN) and exits 0 without an unhealthy report', { timeout: 60_000 }, async () => {
    workerApi = await startWorkerApiServer({ liveness: { pingIntervalMs: PING_MS, missedPings: 3 } });
    const worker = startWorkerProcess('init-term', { ...workerApi.envFor(ENDPOINT, PING_MS), INIT_MODE: 'hang' }, FIXTURE);
    await worker.waitForEvent((event) => event.event === 'init-started', 'init to start', START_BOUND_MS);
    worker.signal('SIGTERM');
    const exit = await within(worker.exited, 'the worker to exit', 20_000);
    expect(exit.code).toBe(0);
    expect(worker.events.find((event) => event.event === 'init-aborted')?.reason).toBe('SW_WORKER_SHUTDOWN');
    expect(workerApi.seen.unhealthy).toEqual([]);
  });
});
