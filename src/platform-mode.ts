/**
 * @module platform-mode
 * The worker on the real platform (RUNPOD_WEBHOOK_GET_JOB set): the platform
 * transport built from the environment, the worker runtime on top of it, SIGTERM and
 * SIGINT as a graceful stop. Answers the process exit code: 0 after a clean stop, 1
 * when a handler ignored its abort and the worker must be replaced.
 */
import type { Logger } from 'pino';
import { createPlatformTransport, type PlatformTransportMetrics, type PlatformTransportSettingsInput } from './transports/platform/index.js';
import { WorkerRuntime, logJobEnd, onShutdownSignals, type Handler, type WorkerConfig } from './worker/index.js';

export interface PlatformWorkerExtras {
  /** Variables to read; default process.env. */
  readonly processEnv?: NodeJS.ProcessEnv;
  /** Counters for result-post retries and give-ups and heartbeat failures (a `createMetrics()` object fits); default none. */
  readonly metrics?: PlatformTransportMetrics;
  /** Transport settings (poll bound, result deadline, ...); default the transport's defaults. */
  readonly transport?: PlatformTransportSettingsInput;
}

/**
 * Serve jobs from the platform until SIGTERM/SIGINT or an unresponsive handler stops
 * the worker; resolves with the exit code.
 * @throws ServerlessWorkerError SW_INVALID_ENV naming a malformed platform variable (before any job is taken).
 */
export async function runPlatformWorker(
  handler: Handler<unknown>,
  config: WorkerConfig,
  logger: Logger,
  extras: PlatformWorkerExtras = {},
): Promise<number> {
  const transport = createPlatformTransport({
    ...extras.transport,
    logger,
    ...(extras.processEnv !== undefined ? { processEnv: extras.processEnv } : {}),
    ...(config.workerId !== undefined ? { workerId: config.workerId } : {}),
    ...(extras.metrics !== undefined ? { metrics: extras.metrics } : {}),
  });
  const runtime = new WorkerRuntime(handler, config, transport, logger, {
    onJobEnd: (job, outcome) => logJobEnd(logger, job, outcome),
  });
  const offSignals = onShutdownSignals(logger, () => void runtime.stop('shutdown'));
  logger.info({ workerId: transport.workerId, concurrency: typeof config.concurrency === 'number' ? config.concurrency : 'dynamic' }, 'worker serving the platform');
  try {
    const exit = await runtime.start();
    logger.info({ reason: exit.reason, exitCode: exit.exitCode }, 'worker stopped');
    return exit.exitCode;
  } finally {
    offSignals();
  }
}
