/**
 * @module platform-mode
 * The worker on the real platform (RUNPOD_WEBHOOK_GET_JOB set): the platform
 * transport built from the environment, the worker runtime on top of it, SIGTERM and
 * SIGINT as a graceful stop. Answers the process exit code: 0 after a clean stop, 1
 * when a handler ignored its abort and the worker must be replaced.
 */
import type { Logger } from 'pino';
import { GPU_HEALTH_CHECK_NAME, checkGpuPresence, createGpuSampler } from './gpu/index.js';
import { bindGpuMetrics, loadMetrics, startMetricsServer, type Metrics } from './metrics/index.js';
import { createPlatformTransport, type PlatformTransport, type PlatformTransportSettingsInput } from './transports/platform/index.js';
import type { Transport } from './transports/transport.js';
// Constants only: the channel's schemas load in the supervised child alone.
import { SUPERVISED_CHANNEL_ENV, SUPERVISED_CHANNEL_IPC } from './transports/supervised/channel-env.js';
import {
  WorkerRuntime,
  createJobTelemetry,
  onShutdownSignals,
  reportedHostname,
  resolvePlatformExtras,
  startHandler,
  type Handler,
  type JobTelemetry,
  type WorkerConfig,
} from './worker/index.js';
const { writeSync } = process.getBuiltinModule('node:fs');

export interface PlatformWorkerExtras {
  /** Variables to read; default process.env. */
  readonly processEnv?: NodeJS.ProcessEnv;
  /** The worker's metrics; default a new registry when a metrics port is set, else none (nothing would read it). */
  readonly metrics?: Metrics;
  /** Transport settings (poll bound, result deadline, ...); default the transport's defaults. */
  readonly transport?: PlatformTransportSettingsInput;
  /** The worker of `--serve-api` (local/supervisor.ts): a failed init is printed as the local modes print it, for the developer's terminal. Default false. */
  readonly localInitFailure?: boolean;
  /**
   * A worker a harness launched: told when that harness is gone, the worker takes no new
   * job and keeps its results for a harness that comes back, then exits (local/harness-gone.ts). Default none.
   */
  readonly harnessGone?: { onGone(listener: (why: string) => void): void };
}

/** The supervised child's transport over `platform` (made with no heartbeat or watchdog: its supervisor keeps them), loaded only in that child. */
async function supervisedTransport(
  platform: PlatformTransport,
  config: WorkerConfig,
  logger: Logger,
): Promise<Transport & { readonly jobWatch: PlatformTransport['jobWatch'] }> {
  const { SupervisedTransport, SupervisorLink } = await import('./transports/supervised/index.js');
  return new SupervisedTransport({
    platform,
    link: new SupervisorLink(process, logger),
    logger,
    // The deadline watchdog, kept by the supervisor, unless turned off.
    timeouts: config.deadlineWatchdog ? { defaultMs: config.defaultExecutionTimeoutMs, graceMs: config.timeoutGraceMs } : undefined,
  });
}

type ResolvedExtras = ReturnType<typeof resolvePlatformExtras>;

/** The platform transport the environment describes, with the worker's deadline watchdog when configured (none in a supervised child). */
function platformTransportFor(
  config: WorkerConfig,
  extras: PlatformWorkerExtras,
  env: NodeJS.ProcessEnv,
  logger: Logger,
  metrics: Metrics | undefined,
  supervised: boolean,
): PlatformTransport {
  return createPlatformTransport({
    ...config.platformTransport,
    ...extras.transport,
    // The supervised child's heartbeat and watchdog are its supervisor's: no thread here.
    ...(supervised ? { heartbeat: false } : {}),
    logger,
    processEnv: env,
    ...(metrics ? { metrics } : {}),
    ...(config.workerId !== undefined ? { workerId: config.workerId } : {}),
    ...(config.deadlineWatchdog && !supervised
      ? {
          watchdog: {
            timeoutGraceMs: config.timeoutGraceMs,
            hostname: reportedHostname(env),
            slots: typeof config.concurrency === 'number' ? config.concurrency : 256,
            ...(config.eventLoopBlockedMs !== undefined ? { blockedUnclaimMs: config.eventLoopBlockedMs } : {}),
          },
        }
      : {}),
  });
}

/** The start-up GPU check (EXPECT_GPU): false when it failed, after telling the platform why. */
async function gpuCheckPassed(settings: ResolvedExtras, transport: Transport, env: NodeJS.ProcessEnv, logger: Logger): Promise<boolean> {
  if (settings.expectGpu === undefined) return true;
  const presence = await checkGpuPresence(settings.expectGpu, { env });
  if (presence.ok) {
    logger.info({ vendor: presence.vendor, gpus: presence.gpus.length }, 'start-up check: GPU present');
    return true;
  }
  // Tell the platform why before leaving, so it replaces this worker instead of retrying it blindly.
  await transport.reportUnhealthy?.(GPU_HEALTH_CHECK_NAME, presence.message).catch((error: unknown) => {
    logger.warn({ err: error }, 'could not report the failed GPU check');
  });
  logger.fatal({ expected: presence.expected, found: presence.found }, `start-up check failed: ${presence.message}`);
  return false;
}

/** GPU sampling, the metrics server and the job telemetry of one worker; close() ends what was started. */
interface WorkerObservers {
  readonly telemetry: JobTelemetry;
  close(): Promise<void>;
}

async function startObservers(
  config: WorkerConfig,
  settings: ResolvedExtras,
  env: NodeJS.ProcessEnv,
  logger: Logger,
  metrics: Metrics | undefined,
): Promise<WorkerObservers> {
  const sampler = config.gpuSampling ? createGpuSampler({ intervalMs: config.gpuSampleIntervalMs, env }) : undefined;
  const unbindGpu = sampler && metrics ? bindGpuMetrics(metrics, sampler) : undefined;
  const metricsServer =
    metrics && settings.metricsPort !== undefined ? await startMetricsServer(metrics, settings.metricsPort, settings.metricsHost) : undefined;
  if (metricsServer) logger.info({ url: metricsServer.url }, `metrics served at ${metricsServer.url}`);
  const telemetry = createJobTelemetry({
    logger,
    logEveryJob: config.logEveryJob,
    summaryIntervalMs: config.jobSummaryIntervalMs,
    ...(metrics ? { metrics } : {}),
    ...(sampler ? { sampler } : {}),
  });
  return {
    telemetry,
    async close() {
      unbindGpu?.();
      await sampler?.close();
      await metricsServer?.close();
    },
  };
}

/**
 * process.exit() while jobs run (a handler called it): the jobs are the platform's to
 * requeue once the heartbeat stops; say so, and never leave with 0 (a clean stop).
 */
function exitWithJobsWarning(runtime: WorkerRuntime): (code: number) => void {
  return (code) => {
    const jobs = runtime.runningJobIds;
    if (jobs.length === 0) return;
    try {
      writeSync(
        2,
        `serverless-worker: the process exited (code ${code}) with jobs running: ${jobs.join(', ')}; a job whose result was not posted goes back to the queue once this worker's heartbeat stops\n`,
      );
    } catch {
      // stderr closed.
    }
    if (code === 0) process.exitCode = 1;
  };
}

/** A harness that launched this worker is gone: keep the results for one that comes back on its address. */
function keepResultsWhenHarnessGone(
  extras: PlatformWorkerExtras,
  runtime: WorkerRuntime,
  platform: PlatformTransport,
  settings: ResolvedExtras,
  env: NodeJS.ProcessEnv,
  logger: Logger,
): void {
  extras.harnessGone?.onGone((why) => {
    void import('./local/harness-gone.js').then(({ keepResultsForReturningHarness }) =>
      keepResultsForReturningHarness({
        runtime,
        waitMs: settings.harnessReturnWaitMs,
        logger,
        why,
        harnessUrl: env.RUNPOD_WEBHOOK_GET_JOB,
        retryNow: () => platform.retryNow(),
      }),
    );
  });
}

/**
 * Serve jobs from the platform until SIGTERM/SIGINT or an unresponsive handler stops
 * the worker; resolves with the exit code.
 * @throws ServerlessWorkerError SW_INVALID_ENV naming a malformed platform variable (before any job is taken).
 */
export async function runPlatformWorker(
  handler: Handler<unknown, unknown>,
  config: WorkerConfig,
  logger: Logger,
  extras: PlatformWorkerExtras = {},
): Promise<number> {
  const env = extras.processEnv ?? process.env;
  const settings = resolvePlatformExtras(config, env);
  // Without a port nothing reads the registry: skip its start-up and per-job cost.
  const metrics = extras.metrics ?? (settings.metricsPort !== undefined ? await loadMetrics() : undefined);
  // The worker child of --serve-api, joined over its IPC channel: jobs and results there, its
  // heartbeat and deadline watchdog kept by the supervisor, the rest over HTTP.
  const supervised = env[SUPERVISED_CHANNEL_ENV] === SUPERVISED_CHANNEL_IPC && process.send !== undefined;
  const platform = platformTransportFor(config, extras, env, logger, metrics, supervised);
  const transport = supervised ? await supervisedTransport(platform, config, logger) : platform;
  if (!(await gpuCheckPassed(settings, transport, env, logger))) {
    await transport.close();
    return 1;
  }
  const observers = await startObservers(config, settings, env, logger, metrics);
  // The runtime exists from the start (state initializing while init runs); jobs reach
  // the handler bound to init's state once init has succeeded.
  let active = handler as Handler<unknown>;
  const runtime = new WorkerRuntime(
    (job, ctx) => active(job, ctx),
    config,
    transport,
    logger,
    observers.telemetry,
    transport.jobWatch ? { jobWatch: transport.jobWatch } : {},
  );
  if (config.init !== undefined) runtime.beginInitializing();
  // The heartbeat starts now, so that the platform (and a harness's /health, as
  // initializing) hears from the worker during init; init failing is reported once.
  transport.setJobsInProgress([]);
  const started = await startHandler(handler, config, logger, {
    workerId: transport.workerId,
    ...(metrics ? { metrics } : {}),
    report: (check, reason) => transport.reportUnhealthy?.(check, reason) ?? Promise.resolve(),
    ...(extras.localInitFailure === true ? { errorInLog: false } : {}),
  });
  if (!started.ok) {
    if (extras.localInitFailure === true) await (await import('./local/init-failure.js')).printInitFailure(started.outcome, logger);
    await runtime.stop('shutdown'); // takes no job; closes the transport
    await observers.close();
    return started.exitCode;
  }
  active = started.handler;
  const offSignals = onShutdownSignals(logger, () => void runtime.stop('shutdown'));
  keepResultsWhenHarnessGone(extras, runtime, platform, settings, env, logger);
  const onExit = exitWithJobsWarning(runtime);
  process.on('exit', onExit);
  logger.info(
    { workerId: transport.workerId, concurrency: typeof config.concurrency === 'number' ? config.concurrency : 'dynamic' },
    'worker serving the platform',
  );
  try {
    const exit = await runtime.start();
    logger.info({ reason: exit.reason, exitCode: exit.exitCode }, 'worker stopped');
    return exit.exitCode;
  } finally {
    observers.telemetry.flush();
    offSignals();
    process.off('exit', onExit);
    await observers.close();
  }
}
