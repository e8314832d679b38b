/**
 * @module cli/commands/harness
 * `serverless-worker harness`: the local platform as a standalone server, with no
 * worker of its own. Workers (processes or containers) join over the worker API by
 * pointing their RUNPOD_WEBHOOK_* variables at it; callers use the queue API, the
 * OpenAI-compatible routes and the management API as they would the service.
 * Runs until SIGTERM or SIGINT, then drains: no new job is handed out, running jobs
 * get --drain-timeout-ms to finish (their results and waiting /runsync calls are
 * answered), and what is left is reported lost when the job store is in memory (the
 * default); with `--store postgres://…` it stays in the database for the next start.
 */
import type { Command } from 'commander';
import { composeHarness } from '../../harness/compose.js';
import type { HarnessServer } from '../../harness/server-api.js';
import { testInputFromWorkingDirectory } from '../../harness/dashboard/test-input-file.js';
import { formatWorkerEnv, workerEnvFor } from '../../harness/worker-api/index.js';
import { parseOrThrow } from 'serverless-worker/internal/job/parse.js';
import { ServerlessWorkerError } from 'serverless-worker/internal/job/errors.js';
import { describeStoreSpec } from '../../harness/open-store.js';
import { createLogger } from 'serverless-worker/internal/log/index.js';
import { createGpuSampler } from 'serverless-worker/internal/gpu/sampler.js';
import { createMetrics } from 'serverless-worker/internal/metrics/index.js';
import { onShutdownSignals } from 'serverless-worker/internal/worker/signals.js';
import { launcherOptionsFrom } from '../harness-launcher.js';
import { API_KEY_ENV } from 'serverless-worker/internal/settings/worker-env.js';
import { addSettingOptions } from '../setting-options.js';
import { HARNESS_SETTINGS, HarnessCommandOptionsSchema, type HarnessCommandOptions } from './harness-settings.js';

const HELP_AFTER = `
Routes (base URL printed at start):
  /v2/<endpoint>/run, runsync, status/<id>, status-sync/<id>, stream/<id>, cancel/<id>,
      retry/<id>, purge-queue, health, requests      the queue API
  /v2/<endpoint>/openai/v1/<route>                   OpenAI-compatible calls, as jobs
  /v2/<endpoint>/job-take/..., job-done/..., ping/...  the worker API, for workers
  /lb/<endpoint>/<path>                              a load-balancing endpoint: <path> of a healthy worker
  /v2/<endpoint>/load-balancing/workers              register (POST {url, healthUrl?}), list, DELETE /<id>
  /v1/templates, networkvolumes, endpoints, pods     the management API
  /metrics                                           Prometheus metrics
  /ui                                                the web dashboard (jobs, streams, workers, charts)

Auth: with an API key (--api-key or ${API_KEY_ENV}) every route needs
"Authorization: Bearer <key>" (the bare key is accepted too). Without one the harness
listens on loopback only; --host with another address then needs --insecure-no-auth.

Logs: JSON lines (or pretty on a terminal) on stderr; LOG_LEVEL sets the level.

Example:
  serverless-worker harness --port 8000 --endpoint my-endpoint
  # in another shell: the RUNPOD_* lines it printed, then
  tsx worker.ts`;

/** The lines printed at start; `pingIntervalMs` goes into the printed RUNPOD_PING_INTERVAL (default 10 000). */
export function harnessBanner(
  server: Pick<HarnessServer, 'url' | 'authenticated'> & { dashboardUrl?: string | undefined },
  endpoints: readonly string[],
  pingIntervalMs?: number,
): string {
  // Any id works when none was named: show ready-to-paste values for `local`.
  const example = endpoints[0] ?? 'local';
  return [
    `serverless-worker harness listening on ${server.url}`,
    `  queue API:      ${server.url}/v2/${example}/... (endpoints: ${endpoints.length > 0 ? endpoints.join(', ') : `any id; "${example}" below`})`,
    `  OpenAI:         ${server.url}/v2/${example}/openai/v1`,
    `  load-balancing: ${server.url}/lb/${example}/<path> (workers register with SERVERLESS_WORKER_HARNESS_URL=${server.url})`,
    `  management API: ${server.url}/v1`,
    `  metrics:        ${server.url}/metrics`,
    ...(server.dashboardUrl !== undefined
      ? [
          `  dashboard:      ${server.dashboardUrl} (in a browser${server.authenticated ? '; log in with the API key' : ', no login: this harness has no API key'})`,
        ]
      : []),
    `  auth:           ${server.authenticated ? 'API key required' : 'none (listening on loopback only)'}`,
    `  workers join with (${server.authenticated ? 'also set RUNPOD_AI_API_KEY to the key' : 'no key needed'}):`,
    formatWorkerEnv(workerEnvFor(server.url, example, pingIntervalMs !== undefined ? { pingIntervalMs } : {}))
      .trimEnd()
      .split('\n')
      .map((line) => `    ${line}`)
      .join('\n'),
    '',
  ].join('\n');
}

async function runHarness(options: HarnessCommandOptions): Promise<void> {
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
  const app = await composeHarness({
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
  }).catch(async (error: unknown) => {
    await gpu.close();
    throw error;
  });
  const { server, harness } = app;
  logger.info({ store: describeStoreSpec(options.store), ...(options.store.startsWith('postgres') ? { poolSize: options.pgPoolSize } : {}) }, 'job store open');
  process.stdout.write(harnessBanner(server, options.endpoint, options.pingIntervalMs));
  // A second signal exits at once, but SIGKILLs the launched workers first: none outlives the harness.
  await new Promise<void>((resolve) =>
    onShutdownSignals(
      logger,
      () => resolve(),
      async () => app.launcher?.killAll(),
    ),
  );
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
  await gpu.close();
  logger.flush();
}

/** Register `harness` on the program. */
export function registerHarnessCommand(program: Command): void {
  const command = program
    .command('harness')
    .description('Run the local platform (queue API, OpenAI-compatible routes, worker API, management API, metrics) with no worker of its own');
  addSettingOptions(command, HARNESS_SETTINGS)
    .addHelpText('after', HELP_AFTER)
    .action(async (raw: unknown) => {
      await runHarness(parseOrThrow(HarnessCommandOptionsSchema, raw, 'SW_INVALID_OPTIONS', 'harness options'));
    });
}
