/**
 * @module cli/commands/run-harness
 * The run of `serverless-worker harness` (harness.ts registers the command and loads this
 * module only when it runs: the CLI's other commands never load the server). Composes
 * the harness, prints its banner, and runs until SIGTERM or SIGINT, then drains.
 */
import type { Logger } from 'pino';
import { composeHarness, type ComposedHarness, type ComposeHarnessOptions } from '../../harness/compose.js';
import { testInputFromWorkingDirectory } from '../../harness/dashboard/test-input-file.js';
import { createGpuSampler, createLogger, createMetrics, onShutdownSignals, ServerlessWorkerError, type Metrics } from 'serverless-worker/internal';
import { describeStoreSpec } from '../../harness/open-store.js';
import { launcherOptionsFrom } from '../harness-launcher.js';
import { harnessBanner } from './harness-banner.js';
import type { HarnessCommandOptions } from './harness-settings.js';

type LauncherOptions = Awaited<ReturnType<typeof launcherOptionsFrom>>;

/** What composeHarness is given for these command-line options. */
function composeOptionsFor(
  options: HarnessCommandOptions,
  launcherOptions: LauncherOptions,
  parts: { logger: Logger; metrics: Metrics; gpu: ReturnType<typeof createGpuSampler> },
): ComposeHarnessOptions {
  const { logger, metrics, gpu } = parts;
  return {
    // On PostgreSQL the /v1 records are shared by every harness on the database and outlive this process.
    store: options.store,
    storePoolSize: options.pgPoolSize,
    harnessOptions: {
      autoCreateEndpoints: options.endpoint.length === 0,
      endpoints: options.endpoint,
      maxRequeues: options.maxRequeues,
      maxQueuedBytes: options.maxQueuedBytes,
    },
    ...(launcherOptions
      ? {
          launcher: {
            options: launcherOptions,
            kind: options.launcher,
            machineId: options.machineId,
            dockerHost: options.dockerHost,
            dataDir: options.dataDir,
          },
        }
      : {}),
    // Whatever its flags: the worker processes a harness of this host that is gone left in the data folder are stopped.
    leftoverProcesses: { dataDir: options.dataDir },
    host: options.host,
    port: options.port,
    ...(options.apiKey !== undefined ? { apiKey: options.apiKey } : {}),
    allowUnauthenticatedNonLoopback: options.insecureNoAuth,
    rateLimits: options.rateLimit ? { requestsPerWorker: options.requestsPerWorker } : false,
    webhook: { retryDelayMs: options.webhookRetryDelayMs, timeoutMs: options.webhookTimeoutMs, allow: options.webhookAllow },
    openaiTimeoutMs: options.openaiTimeoutMs,
    streamWaitMs: options.streamWaitMs,
    ...(options.maxConnections !== undefined ? { maxConnections: options.maxConnections } : {}),
    headersTimeoutMs: options.headersTimeoutMs,
    requestTimeoutMs: options.requestTimeoutMs,
    management: options.management ? {} : false,
    workerApi: { liveness: { pingIntervalMs: options.pingIntervalMs, missedPings: options.missedPings } },
    loadBalancing: { requestTimeoutMs: options.lbRequestTimeoutMs, pingIntervalMs: options.lbPingIntervalMs, allow: options.lbAllow },
    logger,
    metrics,
    // The submit form starts from the working directory's test_input.json, when there is one.
    dashboard: { gpu, ...testInputFromWorkingDirectory(logger) },
  };
}

/** Launched workers first (their running jobs finish), then the harness's own drain, then everything closes. */
async function drainAndClose(app: ComposedHarness, options: HarnessCommandOptions, logger: Logger): Promise<void> {
  const { harness } = app;
  // Launched workers drain first (SIGTERM, their shutdown deadline): their running jobs finish.
  await app.stopLauncher();
  logger.info({ drainTimeoutMs: options.drainTimeoutMs }, 'harness draining: no new jobs are handed out; running jobs may finish');
  const left = await harness.drain(options.drainTimeoutMs);
  if (harness.store.kind !== 'memory') {
    logger.info(
      { ...left },
      `harness stopping: ${left.running} running and ${left.queued} queued job(s) stay in the job store for the next start or another harness`,
    );
  } else if (left.running > 0 || left.queued > 0) {
    logger.warn({ ...left }, `harness stopping: the job store is in memory, so ${left.running} running and ${left.queued} queued job(s) are lost`);
  } else {
    logger.info('harness drained: no job running or queued; finished jobs and their results, kept in memory, are dropped');
  }
  // The server, then the slots, the stores and the harness (composeHarness opened them).
  await app.close();
}

export async function runHarness(options: HarnessCommandOptions): Promise<void> {
  const logger = createLogger({ name: 'serverless-worker-harness' });
  // Process metrics from the first /metrics scrape on: an idle harness nobody scrapes runs no event-loop monitor.
  const metrics = createMetrics({ defaultMetrics: 'from-first-read' });
  // --image / --launcher-config: the harness runs the workers of matching templates itself.
  const launcherOptions = await launcherOptionsFrom(options, logger);
  if (launcherOptions && !options.management)
    throw new ServerlessWorkerError(
      'SW_INVALID_OPTIONS',
      `${options.launcher === 'docker' ? '--launcher docker' : '--image'} needs the management API (/v1): drop --no-management`,
    );
  // This machine's GPUs for the dashboard, read only while a dashboard page is open.
  const gpu = createGpuSampler();
  // Signals from before the start on: whoever acts on the banner (a script, a supervisor, a test) may signal at once,
  // and a SIGTERM that came before the handler would end the process by the default action, with no drain. One that
  // comes while the harness starts stops it once it is up. A second signal exits at once, but SIGKILLs the launched
  // workers first: none outlives the harness.
  let app: ComposedHarness | undefined;
  let signalled!: () => void;
  const stopped = new Promise<void>((resolve) => (signalled = resolve));
  const offSignals = onShutdownSignals(
    logger,
    () => signalled(),
    async () => app?.launcher?.killAll(),
  );
  app = await composeHarness(composeOptionsFor(options, launcherOptions, { logger, metrics, gpu })).catch(async (error: unknown) => {
    offSignals();
    await gpu.close();
    throw error;
  });
  logger.info({ store: describeStoreSpec(options.store), ...(options.store.startsWith('postgres') ? { poolSize: options.pgPoolSize } : {}) }, 'job store open');
  process.stdout.write(harnessBanner(app.server, options.endpoint, options.pingIntervalMs));
  // Until a signal; one that came while it started drains it now.
  await stopped;
  await drainAndClose(app, options, logger);
  await gpu.close();
  logger.flush();
}
