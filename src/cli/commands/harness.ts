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
import { InvalidArgumentError, Option, type Command } from 'commander';
import * as z from 'zod';
import { DEFAULT_MAX_QUEUED_BYTES, Harness } from '../../harness/index.js';
import { createHarnessServer, type HarnessServer } from '../../harness/http/index.js';
import { testInputFromWorkingDirectory } from '../../harness/http/ui/test-input-file.js';
import { formatWorkerEnv, workerEnvFor } from '../../harness/http/worker-api/index.js';
import { DEFAULT_REQUESTS_PER_WORKER } from '../../harness/http/rate-limit/limits.js';
import { parseOrThrow } from '../../job/parse.js';
import { ServerlessWorkerError } from '../../job/errors.js';
import { createLogger } from '../../log/index.js';
import { createGpuSampler } from '../../gpu/sampler.js';
import { createMetrics } from '../../metrics/index.js';
import { onShutdownSignals } from '../../worker/signals.js';
import { InMemoryManagementStore, type ManagementStore } from '../../harness/management/index.js';
import { Launcher, LocalSlotClaims, defaultMachineId, type LaunchBackend, type SlotClaims } from '../../harness/launcher/index.js';
import { launcherOptionsFrom } from '../harness-launcher.js';
import { defaultHarnessDataDir } from '../../harness/launcher/launcher-data-dir.js';
import { PoolSizeSchema, STORE_ENV, StoreSpecSchema, describeStoreSpec, openJobStore } from '../../harness/store/open-store.js';
import { DEFAULT_POOL_SIZE, type PostgresDatabase } from '../../harness/postgres/database.js';

const API_KEY_ENV = 'SERVERLESS_WORKER_API_KEY';

/** A whole number from `min` to `max` for commander; its error makes commander exit 2 with the usage. */
function wholeNumber(min: number, max: number): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (!/^\d+$/.test(value.trim()) || !Number.isInteger(n) || n < min || n > max) {
      throw new InvalidArgumentError(`expected a whole number from ${min} to ${max}, got ${JSON.stringify(value)}`);
    }
    return n;
  };
}

/** A comma-separated list for commander, added to the values of earlier uses of the flag. */
function commaList(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), ...value.split(',').map((part) => part.trim()).filter((part) => part !== '')];
}

const HarnessCommandOptionsSchema = z.object({
  host: z.string().min(1),
  port: z.number().int().min(0).max(65_535),
  apiKey: z.string().min(1, { error: '--api-key must not be empty' }).optional(),
  insecureNoAuth: z.boolean().default(false),
  endpoint: z.array(z.string().regex(/^[A-Za-z0-9._-]{1,128}$/, { error: 'endpoint ids are 1-128 letters, digits, ".", "-" or "_"' })).default([]),
  rateLimit: z.boolean().default(true),
  requestsPerWorker: z.number().int().min(0),
  webhookRetryDelayMs: z.number().int().min(0),
  webhookTimeoutMs: z.number().int().min(1),
  webhookAllow: z.array(z.string()).default([]),
  lbAllow: z.array(z.string()).default([]),
  openaiTimeoutMs: z.number().int().min(1),
  streamWaitMs: z.number().int().min(0),
  management: z.boolean().default(true),
  pingIntervalMs: z.number().int().min(10),
  missedPings: z.number().int().min(1),
  maxRequeues: z.number().int().min(0),
  maxQueuedBytes: z.number().int().min(1),
  drainTimeoutMs: z.number().int().min(0),
  lbRequestTimeoutMs: z.number().int().min(1),
  lbPingIntervalMs: z.number().int().min(10),
  image: z.array(z.string()).optional(),
  launcherConfig: z.string().min(1).optional(),
  gpus: z.string().min(1).optional(),
  launcher: z.enum(['process', 'docker'], { error: '--launcher must be process or docker' }).default('process'),
  dockerHost: z.string().min(1).optional(),
  dataDir: z.string().min(1).optional(),
  store: StoreSpecSchema.default('memory'),
  pgPoolSize: PoolSizeSchema,
  machineId: z.string().trim().min(1, { error: '--machine-id must not be empty' }).max(200).optional(),
});
type HarnessCommandOptions = z.infer<typeof HarnessCommandOptionsSchema>;

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
    ...(server.dashboardUrl !== undefined ? [`  dashboard:      ${server.dashboardUrl} (in a browser; log in with the API key)`] : []),
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

/** The launcher's worker slots: this process's own, or on PostgreSQL shared by every machine on the database. */
async function openSlotClaims(options: HarnessCommandOptions, database: PostgresDatabase | undefined): Promise<SlotClaims> {
  const machineId = options.machineId ?? defaultMachineId();
  if (!database) return new LocalSlotClaims(machineId);
  const { PostgresSlotClaims } = await import('../../harness/launcher/postgres-slot-claims.js');
  return new PostgresSlotClaims(database, { machineId });
}

async function runHarness(options: HarnessCommandOptions): Promise<void> {
  const logger = createLogger({ name: 'serverless-worker-harness' });
  // On PostgreSQL, one database handle (one pool of --pg-pool-size connections) for every store of this process.
  const { store: jobStore, database } = await openJobStore(options.store, {
    poolSize: options.pgPoolSize,
    onError: (error) => logger.warn({ err: error }, 'job store: background error (it goes on)'),
  });
  logger.info({ store: describeStoreSpec(options.store), ...(database ? { poolSize: database.poolSize, migrated: database.applied } : {}) }, 'job store open');
  const harness = new Harness({
    autoCreateEndpoints: options.endpoint.length === 0,
    endpoints: options.endpoint,
    maxRequeues: options.maxRequeues,
    maxQueuedBytes: options.maxQueuedBytes,
    store: jobStore,
  });
  // On PostgreSQL the /v1 records are shared by every harness on the database and outlive this process.
  const store: ManagementStore = database
    ? new (await import('../../harness/management/store/postgres-management-store.js')).PostgresManagementStore(database)
    : new InMemoryManagementStore();
  // Process metrics from the first /metrics scrape on: an idle harness nobody scrapes runs no event-loop monitor.
  const metrics = createMetrics({ defaultMetrics: 'from-first-read' });
  // --image / --launcher-config: the harness runs the workers of matching templates itself.
  const launcherOptions = await launcherOptionsFrom(options, logger);
  if (launcherOptions && !options.management) throw new ServerlessWorkerError('SW_INVALID_OPTIONS', `${options.launcher === 'docker' ? '--launcher docker' : '--image'} needs the management API (/v1): drop --no-management`);
  const slots = launcherOptions ? await openSlotClaims(options, database) : undefined;
  if (slots) logger.info({ machineId: slots.machineId, shared: slots.shared }, `launcher machine id: ${slots.machineId}${slots.shared ? ' (worker slots shared with every harness on the database)' : ''}`);
  // --launcher docker: the engine is asked at start, so a wrong --docker-host fails here, not at the first job.
  let containers: LaunchBackend | undefined;
  if (slots && options.launcher === 'docker') {
    const { DockerBackend, parseDockerHost } = await import('../../harness/launcher/docker/index.js');
    containers = await DockerBackend.open({ host: parseDockerHost(options.dockerHost), dataDir: options.dataDir ?? defaultHarnessDataDir(), machineId: slots.machineId, logger });
  }
  const launcher = launcherOptions ? new Launcher(launcherOptions, { harness, store, logger, metrics, ...(slots ? { slots } : {}), ...(containers ? { containers } : {}) }) : undefined;
  harness.launchedWorkers = launcher;
  // This machine's GPUs for the dashboard, read only while a dashboard page is open.
  const gpu = createGpuSampler();
  const server = await createHarnessServer({
    harness,
    host: options.host,
    port: options.port,
    ...(options.apiKey !== undefined ? { apiKey: options.apiKey } : {}),
    allowUnauthenticatedNonLoopback: options.insecureNoAuth,
    rateLimits: options.rateLimit ? { requestsPerWorker: options.requestsPerWorker } : false,
    webhook: { retryDelayMs: options.webhookRetryDelayMs, timeoutMs: options.webhookTimeoutMs, allow: options.webhookAllow },
    openaiTimeoutMs: options.openaiTimeoutMs,
    streamWaitMs: options.streamWaitMs,
    management: options.management ? { store } : false,
    workerApi: { liveness: { pingIntervalMs: options.pingIntervalMs, missedPings: options.missedPings } },
    loadBalancing: { requestTimeoutMs: options.lbRequestTimeoutMs, pingIntervalMs: options.lbPingIntervalMs, allow: options.lbAllow },
    logger,
    metrics,
    // The submit form starts from the working directory's test_input.json, when there is one.
    dashboard: { gpu, ...testInputFromWorkingDirectory(logger) },
  });
  process.stdout.write(harnessBanner(server, options.endpoint, options.pingIntervalMs));
  launcher?.start({ url: server.url, ...(options.apiKey !== undefined ? { apiKey: options.apiKey } : {}) });
  await new Promise<void>((resolve) => onShutdownSignals(logger, () => resolve()));
  // Launched workers drain first (SIGTERM, their shutdown deadline): their running jobs finish.
  await launcher?.close();
  logger.info({ drainTimeoutMs: options.drainTimeoutMs }, 'harness draining: no new jobs are handed out; running jobs may finish');
  const left = await harness.drain(options.drainTimeoutMs);
  if (jobStore.kind !== 'memory') {
    logger.info({ ...left }, `harness stopping: ${left.running} running and ${left.queued} queued job(s) stay in the job store for the next start or another harness`);
  } else if (left.running > 0 || left.queued > 0) {
    logger.warn({ ...left }, `harness stopping: the job store is in memory, so ${left.running} running and ${left.queued} queued job(s) are lost`);
  } else {
    logger.info('harness drained: no job running or queued; finished jobs and their results, kept in memory, are dropped');
  }
  await server.close();
  await gpu.close();
  await slots?.close();
  await store.close();
  await harness.close();
  await database?.close();
  logger.flush();
}

/** Register `harness` on the program. */
export function registerHarnessCommand(program: Command): void {
  program
    .command('harness')
    .description('Run the local platform (queue API, OpenAI-compatible routes, worker API, management API, metrics) with no worker of its own')
    .addOption(new Option('--host <address>', 'address to listen on (without an API key only loopback is allowed)').default('127.0.0.1'))
    .addOption(new Option('--port <port>', 'port to listen on; 0 picks a free one').argParser(wholeNumber(0, 65_535)).default(8000))
    .addOption(new Option('--api-key <key>', 'require this key on every route (Authorization: Bearer <key>)').env(API_KEY_ENV))
    .option('--insecure-no-auth', 'allow a non-loopback --host without an API key (anyone who reaches it can run jobs)')
    .option('--endpoint <id...>', 'create these endpoints at start and serve only them (and those made through /v1/endpoints); default: any id works')
    .option('--no-rate-limit', 'turn the spec 8.2 rate limits off (429 with Retry-After when on)')
    .addOption(
      new Option('--requests-per-worker <n>', 'rate per 10 s each running worker adds: the limit is max(base, workers x n)')
        .argParser(wholeNumber(0, 1_000_000))
        .default(DEFAULT_REQUESTS_PER_WORKER),
    )
    .addOption(
      new Option('--webhook-retry-delay-ms <ms>', 'wait between webhook attempts (3 attempts in all)').argParser(wholeNumber(0, 3_600_000)).default(10_000),
    )
    .addOption(new Option('--webhook-timeout-ms <ms>', 'time one webhook attempt may take').argParser(wholeNumber(1, 600_000)).default(10_000))
    .addOption(
      new Option('--webhook-allow <targets>', 'webhook targets allowed beyond the default policy: CIDR ranges, addresses, loopback, link-local, metadata (comma-separated, repeatable; never the harness itself)')
        .argParser(commaList)
        .default([]),
    )
    .addOption(
      new Option('--openai-timeout-ms <ms>', 'longest an OpenAI-compatible call waits for its job (then the job is cancelled, 504)')
        .argParser(wholeNumber(1, 604_800_000))
        .default(600_000),
    )
    .addOption(
      new Option('--stream-wait-ms <ms>', 'how long GET /stream waits for a chunk when none is unread (per call: ?wait=)')
        .argParser(wholeNumber(0, 300_000))
        .default(10_000),
    )
    .option('--no-management', 'leave the management API (/v1) out')
    .addOption(
      new Option('--ping-interval-ms <ms>', "the workers' heartbeat interval (RUNPOD_PING_INTERVAL, printed for them)").argParser(wholeNumber(10, 3_600_000)).default(10_000),
    )
    .addOption(
      new Option('--missed-pings <n>', 'a worker silent this many ping intervals is gone: its jobs go back to the queue').argParser(wholeNumber(1, 1_000)).default(3),
    )
    .addOption(
      new Option('--max-requeues <n>', 'times a job lost with its worker goes back to the queue before it ends FAILED (SW_REQUEUE_LIMIT)').argParser(wholeNumber(0, 1_000)).default(3),
    )
    .addOption(
      new Option('--max-queued-bytes <n>', 'bytes of request bodies that queued jobs may hold in memory, every endpoint together; past it /run and /runsync answer 503 SW_QUEUE_FULL with Retry-After (memory store only)')
        .argParser(wholeNumber(1, Number.MAX_SAFE_INTEGER))
        .default(DEFAULT_MAX_QUEUED_BYTES),
    )
    .addOption(
      new Option('--store <store>', 'where jobs live: memory (default; lost when the process ends) or postgres://user:password@host:5432/database (durable; harnesses on one database share the queue)')
        .env(STORE_ENV),
    )
    .addOption(
      new Option('--pg-pool-size <n>', 'with --store postgres://: connections in the pool every store of this process shares (LISTEN takes one more)')
        .argParser(wholeNumber(1, 1_000))
        .default(DEFAULT_POOL_SIZE),
    )
    .addOption(
      new Option('--drain-timeout-ms <ms>', 'on SIGTERM/SIGINT, how long running jobs may take to finish before the harness stops').argParser(wholeNumber(0, 3_600_000)).default(30_000),
    )
    .addOption(
      new Option('--lb-request-timeout-ms <ms>', 'load-balancing endpoints: answer 524 past this (the platform: about 5.5 min)')
        .argParser(wholeNumber(1, 86_400_000))
        .default(330_000),
    )
    .addOption(
      new Option('--lb-allow <targets>', 'load-balancing worker URLs allowed beyond the default policy (without an API key: loopback only): CIDR ranges, addresses, loopback, link-local, metadata (comma-separated, repeatable)')
        .argParser(commaList)
        .default([]),
    )
    .addOption(new Option('--lb-ping-interval-ms <ms>', 'load-balancing endpoints: how often each worker\'s /ping is checked').argParser(wholeNumber(10, 600_000)).default(1_000))
    .option('--image <NAME=COMMAND...>', 'run the workers of templates whose imageName is NAME as local processes running COMMAND, scaled by their endpoint settings (repeatable)')
    .addOption(
      new Option('--launcher <kind>', 'process: run only the --image commands; docker: run every template\'s imageName as containers on a Docker engine (--image commands still run as processes)')
        .choices(['process', 'docker'])
        .default('process'),
    )
    .addOption(new Option('--docker-host <host>', 'with --launcher docker: the engine, unix:///path/to/docker.sock or tcp://host:port (default unix:///var/run/docker.sock)').env('DOCKER_HOST'))
    .option('--data-dir <dir>', 'with --launcher docker: the harness\'s data folder; network volumes are its volumes/<id> folders, bound at /runpod-volume (default ~/.serverless-worker/harness)')
    .option('--launcher-config <file>', 'JSON file: {"images": {"NAME": "COMMAND"}, "gpus": "0,1", "shutdownDeadlineMs": 10000, ...}')
    .option('--gpus <list>', 'GPUs the launcher hands out, like 0,1,2,3 or amd:0,1 or none; default: read with nvidia-smi / rocm-smi')
    .option('--machine-id <id>', 'this machine\'s name on the worker slots it claims (with --store postgres://, harnesses on several machines share the slots); default <hostname>-<pid>')
    .addHelpText('after', HELP_AFTER)
    .action(async (raw: unknown) => {
      await runHarness(parseOrThrow(HarnessCommandOptionsSchema, raw, 'SW_INVALID_OPTIONS', 'harness options'));
    });
}
