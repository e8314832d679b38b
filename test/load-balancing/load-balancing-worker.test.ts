/**
 * A load-balancing worker process on its own (the node:http example), over real
 * sockets on loopback ports the test picks: /ping 204 during init then 200, on
 * PORT_HEALTH whether or not it equals PORT; requests before ready refused with 503;
 * a failed init leaves /ping at 503 and exits 1 (also when SIGTERM ends the wait);
 * SIGTERM during init aborts it and waits for its clean-up, then exits 0; SIGTERM
 * drains (ping 503, new requests refused, the request in flight finishes) and exits 0.
 * /metrics (SERVERLESS_WORKER_METRICS_PORT) counts init and requests. Bounded waits only.
 */
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { killAllWorkers, type WorkerProcess } from '../platform/worker-process.js';
import { freePort, waitFor, within } from '../kit/index.js';
import { startLbWorker, statusOf } from './lb-process.js';

const START_BOUND_MS = 30_000;
const METRICS_ENV = { SERVERLESS_WORKER_METRICS_PORT: '0', SERVERLESS_WORKER_METRICS_HOST: '127.0.0.1', LOG_LEVEL: 'info' };

/** The /metrics URL the worker logged (needs LOG_LEVEL info). */
function metricsUrl(worker: WorkerProcess): Promise<string> {
  return waitFor(
    () => /metrics served at (http:\/\/127\.0\.0\.1:\d+\/metrics)/.exec(worker.stderr())?.[1],
    `the metrics URL in the log (stderr: ${worker.stderr().slice(-1_000)})`,
    START_BOUND_MS,
  );
}

/** The value of one sample line (`name{labels} value`) of a Prometheus text, or undefined. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

afterEach(async () => {
  await killAllWorkers();
});

describe('load-balancing worker process', () => {
  it('answers /ping 204 while init runs, then 200, on PORT_HEALTH apart from PORT; the app only once ready', { timeout: 60_000 }, async () => {
    const port = await freePort();
    const healthPort = await freePort();
    const worker = startLbWorker('lb-ping', { PORT: String(port), PORT_HEALTH: String(healthPort), INIT_DELAY_MS: '3000' });
    const ping = `http://127.0.0.1:${healthPort}/ping`;
    await waitFor(async () => (await statusOf(ping)) === 204, `/ping to answer 204 (stderr: ${worker.stderr().slice(-1_000)})`, START_BOUND_MS, 50);
    // The app is not served before init ends; /ping lives on PORT_HEALTH only.
    const early = await fetch(`http://127.0.0.1:${port}/whoami`);
    expect(early.status).toBe(503);
    expect(((await early.json()) as { error: { code: string } }).error.code).toBe('SW_WORKER_NOT_READY');
    await waitFor(async () => (await statusOf(ping)) === 200, '/ping to answer 200 after init', START_BOUND_MS, 50);
    expect(await (await fetch(`http://127.0.0.1:${port}/whoami`)).json()).toEqual({ workerId: 'lb-ping' });
    expect(await statusOf(`http://127.0.0.1:${healthPort}/whoami`)).toBe(404);
    worker.signal('SIGTERM');
    expect((await within(worker.exited, 'the worker to exit', 20_000)).code).toBe(0);
  });

  it('answers /ping on PORT itself when PORT_HEALTH is not set, and 503 after a failed init, then exits 1', { timeout: 60_000 }, async () => {
    const port = await freePort();
    const worker = startLbWorker('lb-fail', { PORT: String(port), INIT_MODE: 'fail', INIT_DELAY_MS: '200', FAILURE_EXIT_DELAY_MS: '3000', LOG_LEVEL: 'info' });
    const ping = `http://127.0.0.1:${port}/ping`;
    await waitFor(
      async () => (await statusOf(ping)) === 503,
      `/ping to answer 503 after the failed init (stderr: ${worker.stderr().slice(-1_000)})`,
      START_BOUND_MS,
      50,
    );
    const exit = await within(worker.exited, 'the worker to exit', 20_000);
    expect(exit.code).toBe(1);
    expect(worker.stderr()).toContain('start-up failed: init failed: weights not found');
  });

  it('drains on SIGTERM: /ping 503, new requests refused, the request in flight finishes, exit 0', { timeout: 60_000 }, async () => {
    const port = await freePort();
    const worker = startLbWorker('lb-drain', { PORT: String(port), INIT_DELAY_MS: '300', ...METRICS_ENV });
    const base = `http://127.0.0.1:${port}`;
    await waitFor(
      async () => (await statusOf(`${base}/ping`)) === 200,
      `the worker to be ready (stderr: ${worker.stderr().slice(-1_000)})`,
      START_BOUND_MS,
      50,
    );
    const metrics = await metricsUrl(worker);
    for (let i = 0; i < 3; i++) expect(await statusOf(`${base}/whoami`)).toBe(200);
    expect(await statusOf(`${base}/nothing-here`)).toBe(404);
    // fetch answers with the headers, which /slow sends at once: the request is in flight at the worker.
    const inFlight = await fetch(`${base}/slow?ms=2000`);
    const slow = inFlight.json().then((body: unknown) => ({ status: inFlight.status, body }));
    const scraped = await (await fetch(metrics)).text();
    expect(sample(scraped, 'serverless_worker_http_requests_in_flight')).toBe(1);
    expect(sample(scraped, 'serverless_worker_http_requests_total{code="200"}')).toBe(3);
    expect(sample(scraped, 'serverless_worker_http_requests_total{code="404"}')).toBe(1);
    const initSeconds = sample(scraped, 'serverless_worker_init_duration_seconds{outcome="ok"}');
    console.log(`init of the worker (a 300 ms wait) measured ${initSeconds} s in /metrics`);
    expect(initSeconds).toBeGreaterThanOrEqual(0.29);
    worker.signal('SIGTERM');
    await waitFor(async () => (await statusOf(`${base}/ping`)) === 503, '/ping to answer 503 while draining', 10_000, 20);
    const refused = await fetch(`${base}/whoami`, { headers: { connection: 'close' } });
    expect(refused.status).toBe(503);
    expect(refused.headers.get('connection')).toBe('close');
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('SW_WORKER_SHUTDOWN');
    expect(await within(slow, 'the request in flight', 20_000)).toEqual({ status: 200, body: { workerId: 'lb-drain', slept: 2000 } });
    expect((await within(worker.exited, 'the worker to exit', 20_000)).code).toBe(0);
  });

  it(
    "SIGTERM with connections open that never sent a request (a load balancer's preconnect) on PORT, PORT_HEALTH and the metrics port: exit 0 at once, not after Node's 60 s headers timeout",
    { timeout: 60_000 },
    async () => {
      const port = await freePort();
      const healthPort = await freePort();
      const worker = startLbWorker('lb-preconnect', { PORT: String(port), PORT_HEALTH: String(healthPort), INIT_DELAY_MS: '100', ...METRICS_ENV });
      await waitFor(
        async () => (await statusOf(`http://127.0.0.1:${healthPort}/ping`)) === 200,
        `the worker to be ready (stderr: ${worker.stderr().slice(-1_000)})`,
        START_BOUND_MS,
        50,
      );
      const metricsPort = Number(new URL(await metricsUrl(worker)).port);
      const sockets = await Promise.all(
        [port, healthPort, metricsPort].map(
          (target) =>
            new Promise<Socket>((resolve, reject) => {
              const socket = connect(target, '127.0.0.1');
              socket.once('connect', () => resolve(socket)).once('error', reject);
            }),
        ),
      );
      const closed = sockets.map((socket) => new Promise<void>((resolve) => socket.once('close', () => resolve())));
      worker.signal('SIGTERM');
      // Well under the 60 s Node would hold each server's close for these sockets.
      expect((await within(worker.exited, 'the worker to exit with idle preconnected sockets open', 20_000)).code).toBe(0);
      await Promise.all(closed);
    },
  );

  it('SIGTERM during init aborts its signal and waits for its clean-up before exiting 0', { timeout: 60_000 }, async () => {
    const port = await freePort();
    const worker = startLbWorker('lb-init-term', {
      PORT: String(port),
      INIT_DELAY_MS: '600000',
      INIT_CLEANUP_MS: '1000',
      TIMEOUT_GRACE_MS: '10000',
      LOG_LEVEL: 'info',
    });
    await waitFor(
      async () => (await statusOf(`http://127.0.0.1:${port}/ping`)) === 204,
      `/ping to answer 204 (stderr: ${worker.stderr().slice(-1_000)})`,
      START_BOUND_MS,
      50,
    );
    // /ping answers 204 from the start; the signal must come once init itself runs.
    await waitFor(
      () => worker.stderr().includes('start-up phase running') || undefined,
      `init to start (stderr: ${worker.stderr().slice(-1_000)})`,
      START_BOUND_MS,
      20,
    );
    worker.signal('SIGTERM');
    const exit = await within(worker.exited, 'the worker to exit', 30_000);
    expect(exit.code).toBe(0);
    const log = worker.stderr();
    // init's clean-up ran to its end, and before the worker stopped.
    expect(log).toContain('init stopped: clean-up done');
    expect(log).toContain('init stopped by a shutdown signal');
    // By the lines' own times: two loggers' lines can reach stderr out of call order.
    const timeOf = (msg: string): number => {
      const line = log.split('\n').find((candidate) => candidate.includes(`"msg":"${msg}`));
      return Date.parse((JSON.parse(line ?? '{}') as { time?: string }).time ?? '');
    };
    expect(timeOf('init stopped: clean-up done'), log).toBeLessThanOrEqual(timeOf('load-balancing worker stopped'));
    expect(log).not.toContain('init ignored its abort signal');
  });

  it('exits 1 when SIGTERM ends the wait after a failed init; meanwhile /ping gives the reason and /metrics the failed init', { timeout: 60_000 }, async () => {
    const port = await freePort();
    const worker = startLbWorker('lb-fail-term', {
      PORT: String(port),
      INIT_MODE: 'fail',
      INIT_DELAY_MS: '200',
      FAILURE_EXIT_DELAY_MS: '120000',
      ...METRICS_ENV,
    });
    await waitFor(
      async () => (await statusOf(`http://127.0.0.1:${port}/ping`)) === 503,
      `/ping to answer 503 after the failed init (stderr: ${worker.stderr().slice(-1_000)})`,
      START_BOUND_MS,
      50,
    );
    // /ping says why (the platform only reads the status; the harness shows the reason).
    expect(await (await fetch(`http://127.0.0.1:${port}/ping`)).json()).toEqual({ status: 'unhealthy', reason: 'init failed: weights not found' });
    const scraped = await (await fetch(await metricsUrl(worker))).text();
    expect(sample(scraped, 'serverless_worker_init_duration_seconds{outcome="failed"}')).toBeGreaterThanOrEqual(0.19);
    expect(sample(scraped, 'serverless_worker_init_duration_seconds{outcome="ok"}')).toBeUndefined();
    worker.signal('SIGTERM');
    expect((await within(worker.exited, 'the worker to exit', 20_000)).code).toBe(1);
    expect(worker.stderr()).toContain('start-up failed: init failed: weights not found');
  });
});
