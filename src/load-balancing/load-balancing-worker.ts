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
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { checkGpuPresence } from '../gpu/index.js';
import { ServerlessWorkerError } from '../job/index.js';
import { createLogger, loadPrettyLogs } from '../log/index.js';
import { loadMetrics, startMetricsServer, type Metrics } from '../metrics/index.js';
import { runInitPhase, type InitFunction } from '../worker/init/index.js';
import { Lifecycle, type LifecycleState } from '../worker/lifecycle-state.js';
import { resolvePlatformExtras } from '../worker/platform-extras.js';
import { checkRuntimeEnv } from '../worker/runtime-env.js';
import { warnOnOldNode } from '../worker/node-version.js';
import { onShutdownSignals } from '../worker/signals.js';
import { catchStrayErrors } from '../worker/stray-errors.js';
import { sleep, systemClock, type Clock } from '../clock/index.js';
import { DEFAULT_REGISTRATION, HarnessRegistration, type Announcement } from './announce.js';
import { toRequestListener, type HttpApp } from './app-adapter.js';
import { LoadBalancingOptionsSchema, resolveLbEnv, resolveLbOptions, type LoadBalancingConfig } from './lb-options.js';
import { answerPing, isPingPath } from './ping.js';
import { RequestGate } from './request-gate.js';
import { TrackedServer } from './lb-servers.js';

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
  const metrics = platform.metricsPort !== undefined ? await loadMetrics() : undefined;
  const worker = new RunningLbWorker(options, { config, logger, processEnv, env, platform, metrics, clock: extras.clock ?? systemClock });
  await worker.open(extras.signals !== false);
  return worker;
}

interface LbWorkerSetup {
  readonly config: LoadBalancingConfig;
  readonly logger: Logger;
  readonly processEnv: NodeJS.ProcessEnv;
  readonly env: ReturnType<typeof resolveLbEnv>;
  readonly platform: ReturnType<typeof resolvePlatformExtras>;
  readonly metrics: Metrics | undefined;
  readonly clock: Clock;
}

class RunningLbWorker<State> implements LoadBalancingWorker {
  readonly workerId: string;
  readonly done: Promise<number>;
  readonly #options: LoadBalancingOptions<State>;
  readonly #setup: LbWorkerSetup;
  readonly #logger: Logger;
  readonly #lifecycle = new Lifecycle();
  readonly #gate: RequestGate;
  readonly #app: TrackedServer;
  readonly #health: TrackedServer | undefined;
  // SIGTERM/SIGINT or stop() during start-up abort init (its phase then ends 'aborted').
  readonly #stopInit = new AbortController();
  #resolveDone!: (code: number) => void;
  /** Why start-up failed; undefined while it has not. */
  #failure: string | undefined;
  #listener: RequestListener | undefined;
  #metricsServer: Awaited<ReturnType<typeof startMetricsServer>> | undefined;
  #registration: HarnessRegistration | undefined;
  #offSignals: () => void = () => {};
  #stopping: Promise<number> | undefined;
  #startingUp: Promise<void> = Promise.resolve();
  #url = '';
  #healthUrl = '';

  constructor(options: LoadBalancingOptions<State>, setup: LbWorkerSetup) {
    this.#options = options;
    this.#setup = setup;
    this.#logger = setup.logger;
    this.workerId = setup.config.workerId ?? setup.env.podId ?? `lb-${randomUUID().slice(0, 8)}`;
    this.#gate = new RequestGate(setup.metrics, setup.clock);
    this.done = new Promise<number>((resolve) => (this.#resolveDone = resolve));
    this.#app = new TrackedServer((request, response) => this.#serveApp(request, response));
    this.#health = setup.env.sharedPort ? undefined : new TrackedServer((request, response) => this.#serveHealth(request, response));
  }

  get url(): string {
    return this.#url;
  }

  get healthUrl(): string {
    return this.#healthUrl;
  }

  get state(): LifecycleState {
    return this.#lifecycle.state;
  }

  stop(): Promise<number> {
    return this.#shutdown();
  }

  /** Listen, announce, and begin the start-up phase; `signals`: SIGTERM/SIGINT stop the worker. */
  async open(signals: boolean): Promise<void> {
    const { env, platform, metrics } = this.#setup;
    // Signals from now on: one that comes while the servers open stops the worker once they are up.
    let signalledEarly = false;
    let onSignal: () => void = () => (signalledEarly = true);
    this.#offSignals = signals ? onShutdownSignals(this.#logger, () => onSignal()) : () => {};
    // The process is this worker's (as with signals): a stray rejection in the app is logged, not fatal.
    if (signals) catchStrayErrors(this.#logger);
    let port: number;
    let healthPort: number;
    try {
      port = await this.#app.listen(env.port, env.host);
      healthPort = this.#health ? await this.#health.listen(env.healthPort, env.host) : port;
      if (metrics && platform.metricsPort !== undefined) this.#metricsServer = await startMetricsServer(metrics, platform.metricsPort, platform.metricsHost);
    } catch (error) {
      // A port in use, say: nothing is left open or listening to signals.
      this.#offSignals();
      await Promise.all([this.#app.close(), this.#health?.close()]);
      throw error;
    }
    this.#url = `http://${env.advertiseHost}:${port}`;
    this.#healthUrl = `http://${env.advertiseHost}:${healthPort}`;
    this.#announceListening();
    onSignal = () => void this.#shutdown();
    this.#startingUp = this.#startUp().catch((error: unknown) =>
      this.#failStartUp(`start-up phase: ${error instanceof Error ? error.message : String(error)}`),
    );
    if (signalledEarly) void this.#shutdown();
  }

  #announceListening(): void {
    const { env, config, clock } = this.#setup;
    const { workerId, url, healthUrl } = this;
    process.stdout.write(`serverless-worker: load-balancing worker ${workerId} listening on ${url} (GET /ping on ${healthUrl})\n`);
    this.#logger.info({ workerId, url, healthUrl, host: env.host }, 'load-balancing worker listening');
    if (this.#metricsServer) this.#logger.info({ url: this.#metricsServer.url }, `metrics served at ${this.#metricsServer.url}`);
    if (env.harnessUrl === undefined) return;
    const announcement: Announcement = {
      harnessUrl: env.harnessUrl,
      endpointId: env.endpointId,
      workerId,
      url,
      healthUrl,
      concurrency: config.concurrency,
      apiKey: env.apiKey,
    };
    this.#registration = new HarnessRegistration(announcement, this.#logger, DEFAULT_REGISTRATION, clock);
  }

  #serveApp(request: IncomingMessage, response: ServerResponse): void {
    const state = this.#lifecycle.state;
    if (this.#setup.env.sharedPort && isPingPath(request.url) && (request.method === 'GET' || request.method === 'HEAD')) {
      answerPing(response, state, this.#failure);
      return;
    }
    if (state !== 'ready' || this.#listener === undefined) {
      this.#gate.refuse(response, this.#notServing(state === 'draining' || state === 'stopped'));
      return;
    }
    this.#gate.track(response);
    this.#listener(request, response);
  }

  #notServing(draining: boolean): ServerlessWorkerError {
    if (draining) return new ServerlessWorkerError('SW_WORKER_SHUTDOWN', 'This worker is shutting down and takes no new request');
    return new ServerlessWorkerError(
      'SW_WORKER_NOT_READY',
      this.#failure !== undefined
        ? 'This worker failed its start-up and takes no request'
        : 'This worker is still starting (init runs); /ping answers 204 until it is ready',
    );
  }

  #serveHealth(request: IncomingMessage, response: ServerResponse): void {
    if (isPingPath(request.url)) {
      answerPing(response, this.#lifecycle.state, this.#failure);
      return;
    }
    response.writeHead(404, { 'content-type': 'application/json; charset=utf-8' });
    response.end(JSON.stringify({ error: { code: 'SW_ROUTE_NOT_FOUND', message: `Only GET /ping is served on PORT_HEALTH; the app is on PORT` } }));
  }

  /** Drain and stop; the exit code is 1 after a failed start-up (whatever stopped it), else 0. */
  #shutdown(): Promise<number> {
    this.#stopping ??= this.#drainAndClose();
    return this.#stopping;
  }

  async #drainAndClose(): Promise<number> {
    const { config } = this.#setup;
    const state = this.#lifecycle.state;
    const duringStartUp = state === 'starting' || state === 'initializing';
    if (state !== 'draining' && state !== 'stopped') this.#lifecycle.move('draining');
    this.#offSignals();
    this.#stopInit.abort();
    this.#logger.info({ inFlight: this.#gate.inFlight }, 'load-balancing worker draining: /ping answers 503, new requests are refused');
    const withdrawing = this.#registration?.withdraw();
    if (duringStartUp) await this.#waitForStartUp();
    await withdrawing;
    const drained = await this.#gate.waitIdle(config.shutdownTimeoutMs);
    if (!drained)
      this.#logger.warn(
        { inFlight: this.#gate.inFlight, shutdownTimeoutMs: config.shutdownTimeoutMs },
        'drain deadline passed: closing the connections of requests still in flight',
      );
    await Promise.all([this.#app.close(!drained), this.#health?.close(), this.#metricsServer?.close()]);
    this.#lifecycle.move('stopped');
    const exitCode = this.#failure !== undefined ? 1 : 0;
    this.#logger.info({ exitCode }, 'load-balancing worker stopped');
    this.#resolveDone(exitCode);
    return exitCode;
  }

  /** The start-up phase's end, bounded: init gets timeoutGraceMs to stop after its signal aborted (runInit bounds it the same way); the GPU check and app() are bounded here too. */
  async #waitForStartUp(): Promise<void> {
    const { config, clock } = this.#setup;
    const boundMs = config.timeoutGraceMs + START_UP_STOP_MARGIN_MS;
    const over = new AbortController();
    const ended = await Promise.race([this.#startingUp.then(() => true), sleep(boundMs, over.signal, clock).then(() => false)]);
    over.abort();
    if (!ended)
      this.#logger.warn({ timeoutGraceMs: config.timeoutGraceMs }, `the start-up phase did not end within ${boundMs} ms of the stop: stopping without it`);
  }

  #failStartUp(message: string): void {
    const { config, clock } = this.#setup;
    this.#failure = message;
    this.#logger.fatal({ failureExitDelayMs: config.failureExitDelayMs }, `start-up failed: ${message}; /ping answers 503 until the process exits 1`);
    clock.setTimer(config.failureExitDelayMs, () => void this.#shutdown());
  }

  async #startUp(): Promise<void> {
    if (this.#registration) await this.#registration.start();
    if (this.#stopping) return;
    const gpuFailure = await this.#gpuCheckFailure();
    if (gpuFailure !== undefined) return this.#failStartUp(gpuFailure);
    if (this.#stopping) return;
    const { config, metrics } = this.#setup;
    if (config.init !== undefined) this.#lifecycle.move('initializing');
    const outcome = await runInitPhase({
      init: this.#options.init,
      timeoutMs: config.initTimeoutMs,
      graceMs: config.timeoutGraceMs,
      logger: this.#logger,
      workerId: this.workerId,
      signals: false,
      signal: this.#stopInit.signal,
      ...(metrics ? { metrics } : {}),
    });
    if (!outcome.ok) {
      if (outcome.end === 'aborted') return;
      return this.#failStartUp(outcome.error.message);
    }
    try {
      this.#listener = await toRequestListener(await this.#options.app(outcome.state as State));
    } catch (error) {
      return this.#failStartUp(`app(state) failed: ${error instanceof Error ? error.message : String(error)}`);
    }
    if (this.#stopping) return;
    this.#lifecycle.move('ready');
    this.#logger.info({ workerId: this.workerId, url: this.url }, 'load-balancing worker ready: /ping answers 200');
  }

  /** The start-up GPU check (EXPECT_GPU): why it failed, or undefined. */
  async #gpuCheckFailure(): Promise<string | undefined> {
    const { platform, processEnv } = this.#setup;
    if (platform.expectGpu === undefined) return undefined;
    const presence = await checkGpuPresence(platform.expectGpu, { env: processEnv });
    if (!presence.ok) return `GPU check: ${presence.message}`;
    this.#logger.info({ vendor: presence.vendor, gpus: presence.gpus.length }, 'start-up check: GPU present');
    return undefined;
  }
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
