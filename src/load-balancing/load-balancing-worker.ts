/**
 * @module load-balancing/load-balancing-worker
 * A load-balancing worker: the author's HTTP app on PORT, `/ping` on PORT_HEALTH
 * answered from the lifecycle (starting -> initializing -> ready -> draining ->
 * stopped), with the queue worker's start-up phase (init, its timeout, SIGTERM), GPU
 * check, metrics and logs. SIGTERM: /ping answers 503 at once, new requests are refused
 * (503, Connection: close), requests in flight get `shutdownTimeoutMs` to finish, then
 * the servers close. A stop during start-up aborts init's signal and waits for the
 * start-up phase to end (init's clean-up gets `timeoutGraceMs`) before the servers close.
 * A failed start-up (GPU check, init, building the app) leaves /ping at 503 for
 * `failureExitDelayMs`, then the process exits 1 (also when a signal ends that wait).
 */
import { randomUUID } from 'node:crypto';
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { checkGpuPresence } from '../gpu/index.js';
import { ServerlessWorkerError } from '../job/index.js';
import { createLogger, loadPrettyLogs } from '../log/index.js';
import { loadMetrics, startMetricsServer } from '../metrics/index.js';
import { runInitPhase, type InitFunction } from '../worker/init/index.js';
import { Lifecycle, type LifecycleState } from '../worker/lifecycle-state.js';
import { resolvePlatformExtras } from '../worker/platform-extras.js';
import { checkRuntimeEnv } from '../worker/runtime-env.js';
import { warnOnOldNode } from '../worker/node-version.js';
import { trackFreshConnections, type FreshConnections } from '../net/fresh-connections.js';
import { onShutdownSignals } from '../worker/signals.js';
import { catchStrayErrors } from '../worker/stray-errors.js';
import { sleep, systemClock, type Clock } from '../clock/index.js';
import { DEFAULT_REGISTRATION, HarnessRegistration, type Announcement } from './announce.js';
import { toRequestListener, type HttpApp } from './app-adapter.js';
import { LoadBalancingOptionsSchema, resolveLbEnv, resolveLbOptions, type LoadBalancingConfig } from './lb-options.js';
import { answerPing, isPingPath } from './ping.js';
import { RequestGate } from './request-gate.js';

type SchemaInput = import('zod').input<typeof LoadBalancingOptionsSchema>;

/** Beyond timeoutGraceMs, how long a stop waits for the start-up phase to end, ms (init's own grace timer starts a moment after the abort). */
const START_UP_STOP_MARGIN_MS = 1_000;

/** Options as a worker author writes them (see lb-options.ts for each default). Put `init` before `app` so that `state` is typed from it. */
export type LoadBalancingOptions<State = undefined> = Omit<SchemaInput, 'app' | 'init'> & {
  /** The start-up phase; its value is handed to `app`. */
  init?: InitFunction<State>;
  /** Build the HTTP app once init has succeeded: a (req, res) listener, a fastify instance, or { fetch } (hono). */
  app: (state: State) => HttpApp | Promise<HttpApp>;
};

export interface LoadBalancingWorkerExtras {
  /** Variables to read; default process.env. */
  readonly processEnv?: NodeJS.ProcessEnv;
  /** SIGTERM/SIGINT stop the worker; default true. */
  readonly signals?: boolean;
  /** Times registration, the start-up bound and the exit after a failed start-up; default the system clock. */
  readonly clock?: Clock;
}

export interface LoadBalancingWorker {
  readonly workerId: string;
  /** `http://<advertised host>:<PORT>` */
  readonly url: string;
  /** `http://<advertised host>:<PORT_HEALTH>` (/ping is there). */
  readonly healthUrl: string;
  readonly state: LifecycleState;
  /** Resolves with the exit code once the worker has stopped (0 clean, 1 failed start-up). */
  readonly done: Promise<number>;
  /** Graceful stop (as SIGTERM): during start-up it aborts init and waits (bounded) for its clean-up. Answers the exit code. */
  stop(): Promise<number>;
}

function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

/** Close `server`: idle keep-alive connections and those that never sent a request (fresh-connections.ts) go at once. */
function closeServer(server: Server | undefined, fresh: FreshConnections | undefined): Promise<void> {
  if (!server?.listening) return Promise.resolve();
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
    fresh?.closeAll();
  });
}

/** Start a load-balancing worker; answers once it listens (init runs on in the background). */
export async function startLoadBalancingWorker<State>(
  options: LoadBalancingOptions<State>,
  extras: LoadBalancingWorkerExtras = {},
): Promise<LoadBalancingWorker> {
  const config: LoadBalancingConfig = resolveLbOptions(options);
  if (!config.logger) await loadPrettyLogs();
  const logger: Logger = config.logger ?? createLogger();
  const processEnv = extras.processEnv ?? process.env;
  const env = resolveLbEnv(config, processEnv);
  checkRuntimeEnv(processEnv);
  warnOnOldNode(logger, processEnv);
  const platform = resolvePlatformExtras(config, processEnv);
  const workerId = config.workerId ?? env.podId ?? `lb-${randomUUID().slice(0, 8)}`;
  const metrics = platform.metricsPort !== undefined ? await loadMetrics() : undefined;
  const lifecycle = new Lifecycle();
  const clock = extras.clock ?? systemClock;
  const gate = new RequestGate(metrics, clock);
  /** Why start-up failed; undefined while it has not. */
  let failure: string | undefined;
  let listener: RequestListener | undefined;

  const serveApp: RequestListener = (request, response) => {
    if (env.sharedPort && isPingPath(request.url) && (request.method === 'GET' || request.method === 'HEAD')) {
      answerPing(response, lifecycle.state, failure);
      return;
    }
    if (lifecycle.state !== 'ready' || listener === undefined) {
      const draining = lifecycle.state === 'draining' || lifecycle.state === 'stopped';
      gate.refuse(
        response,
        draining
          ? new ServerlessWorkerError('SW_WORKER_SHUTDOWN', 'This worker is shutting down and takes no new request')
          : new ServerlessWorkerError(
              'SW_WORKER_NOT_READY',
              failure !== undefined
                ? 'This worker failed its start-up and takes no request'
                : 'This worker is still starting (init runs); /ping answers 204 until it is ready',
            ),
      );
      return;
    }
    gate.track(response);
    listener(request, response);
  };
  const appServer = createServer(serveApp);
  const appFresh = trackFreshConnections(appServer);
  const healthServer = env.sharedPort
    ? undefined
    : createServer((request, response) => {
        if (isPingPath(request.url)) answerPing(response, lifecycle.state, failure);
        else {
          response.writeHead(404, { 'content-type': 'application/json; charset=utf-8' });
          response.end(JSON.stringify({ error: { code: 'SW_ROUTE_NOT_FOUND', message: `Only GET /ping is served on PORT_HEALTH; the app is on PORT` } }));
        }
      });
  const healthFresh = healthServer ? trackFreshConnections(healthServer) : undefined;
  // Signals from now on: one that comes while the servers open stops the worker once they are up.
  let signalledEarly = false;
  let onSignal: () => void = () => (signalledEarly = true);
  const offSignals = extras.signals !== false ? onShutdownSignals(logger, () => onSignal()) : () => {};
  // The process is this worker's (as with signals): a stray rejection in the app is logged, not fatal.
  if (extras.signals !== false) catchStrayErrors(logger);
  let port: number;
  let healthPort: number;
  let metricsServer: Awaited<ReturnType<typeof startMetricsServer>> | undefined;
  try {
    port = await listen(appServer, env.port, env.host);
    healthPort = healthServer ? await listen(healthServer, env.healthPort, env.host) : port;
    metricsServer = metrics && platform.metricsPort !== undefined ? await startMetricsServer(metrics, platform.metricsPort, platform.metricsHost) : undefined;
  } catch (error) {
    // A port in use, say: nothing is left open or listening to signals.
    offSignals();
    await Promise.all([closeServer(appServer, appFresh), closeServer(healthServer, healthFresh)]);
    throw error;
  }
  const url = `http://${env.advertiseHost}:${port}`;
  const healthUrl = `http://${env.advertiseHost}:${healthPort}`;
  process.stdout.write(`serverless-worker: load-balancing worker ${workerId} listening on ${url} (GET /ping on ${healthUrl})\n`);
  logger.info({ workerId, url, healthUrl, host: env.host }, 'load-balancing worker listening');
  if (metricsServer) logger.info({ url: metricsServer.url }, `metrics served at ${metricsServer.url}`);

  const announcement: Announcement | undefined =
    env.harnessUrl !== undefined
      ? { harnessUrl: env.harnessUrl, endpointId: env.endpointId, workerId, url, healthUrl, concurrency: config.concurrency, apiKey: env.apiKey }
      : undefined;
  const registration = announcement ? new HarnessRegistration(announcement, logger, DEFAULT_REGISTRATION, clock) : undefined;

  let resolveDone!: (code: number) => void;
  const done = new Promise<number>((resolve) => (resolveDone = resolve));
  let stopping: Promise<number> | undefined;
  // SIGTERM/SIGINT or stop() during start-up abort init (its phase then ends 'aborted').
  const stopInit = new AbortController();
  let startingUp: Promise<void> = Promise.resolve();

  /** Drain and stop; the exit code is 1 after a failed start-up (whatever stopped it), else 0. */
  const shutdown = (): Promise<number> => {
    stopping ??= (async () => {
      const duringStartUp = lifecycle.state === 'starting' || lifecycle.state === 'initializing';
      if (lifecycle.state !== 'draining' && lifecycle.state !== 'stopped') lifecycle.move('draining');
      offSignals();
      stopInit.abort();
      logger.info({ inFlight: gate.inFlight }, 'load-balancing worker draining: /ping answers 503, new requests are refused');
      const withdrawing = registration?.withdraw();
      if (duringStartUp) await waitForStartUp();
      await withdrawing;
      const drained = await gate.waitIdle(config.shutdownTimeoutMs);
      if (!drained)
        logger.warn(
          { inFlight: gate.inFlight, shutdownTimeoutMs: config.shutdownTimeoutMs },
          'drain deadline passed: closing the connections of requests still in flight',
        );
      const closing = Promise.all([closeServer(appServer, appFresh), closeServer(healthServer, healthFresh), metricsServer?.close()]);
      if (!drained) appServer.closeAllConnections();
      await closing;
      lifecycle.move('stopped');
      const exitCode = failure !== undefined ? 1 : 0;
      logger.info({ exitCode }, 'load-balancing worker stopped');
      resolveDone(exitCode);
      return exitCode;
    })();
    return stopping;
  };

  /** The start-up phase's end, bounded: init gets timeoutGraceMs to stop after its signal aborted (runInit bounds it the same way); the GPU check and app() are bounded here too. */
  const waitForStartUp = async (): Promise<void> => {
    const boundMs = config.timeoutGraceMs + START_UP_STOP_MARGIN_MS;
    const over = new AbortController();
    const ended = await Promise.race([startingUp.then(() => true), sleep(boundMs, over.signal, clock).then(() => false)]);
    over.abort();
    if (!ended) logger.warn({ timeoutGraceMs: config.timeoutGraceMs }, `the start-up phase did not end within ${boundMs} ms of the stop: stopping without it`);
  };

  const failStartUp = (message: string): void => {
    failure = message;
    logger.fatal({ failureExitDelayMs: config.failureExitDelayMs }, `start-up failed: ${message}; /ping answers 503 until the process exits 1`);
    clock.setTimer(config.failureExitDelayMs, () => void shutdown());
  };

  const startUp = async (): Promise<void> => {
    if (registration) await registration.start();
    if (stopping) return;
    if (platform.expectGpu !== undefined) {
      const presence = await checkGpuPresence(platform.expectGpu, { env: processEnv });
      if (!presence.ok) return failStartUp(`GPU check: ${presence.message}`);
      logger.info({ vendor: presence.vendor, gpus: presence.gpus.length }, 'start-up check: GPU present');
    }
    if (stopping) return;
    if (config.init !== undefined) lifecycle.move('initializing');
    const outcome = await runInitPhase({
      init: options.init,
      timeoutMs: config.initTimeoutMs,
      graceMs: config.timeoutGraceMs,
      logger,
      workerId,
      signals: false,
      signal: stopInit.signal,
      ...(metrics ? { metrics } : {}),
    });
    if (!outcome.ok) {
      if (outcome.end === 'aborted') return;
      return failStartUp(outcome.error.message);
    }
    try {
      listener = await toRequestListener(await options.app(outcome.state as State));
    } catch (error) {
      return failStartUp(`app(state) failed: ${error instanceof Error ? error.message : String(error)}`);
    }
    if (stopping) return;
    lifecycle.move('ready');
    logger.info({ workerId, url }, 'load-balancing worker ready: /ping answers 200');
  };

  onSignal = () => void shutdown();
  startingUp = startUp().catch((error: unknown) => failStartUp(`start-up phase: ${error instanceof Error ? error.message : String(error)}`));

  if (signalledEarly) void shutdown();

  return {
    workerId,
    url,
    healthUrl,
    get state() {
      return lifecycle.state;
    },
    done,
    stop: () => shutdown(),
  };
}

/**
 * Serve `options.app` as a load-balancing worker until SIGTERM/SIGINT, then exit 0 (1
 * after a failed start-up). Startup errors (bad options or variables, a port in use)
 * print one line and exit 1.
 */
export async function serveLoadBalancing<State = undefined>(options: LoadBalancingOptions<State>): Promise<void> {
  try {
    const worker = await startLoadBalancingWorker(options);
    const code = await worker.done;
    options.logger?.flush();
    process.stdout.write('', () => process.exit(code));
  } catch (error) {
    const code = error instanceof ServerlessWorkerError ? `${error.code}: ` : '';
    process.stderr.write(`serverless-worker: ${code}${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  }
}
