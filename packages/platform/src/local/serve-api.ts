/**
 * @module local/serve-api
 * `--serve-api` (or `--rp_serve_api`): the harness's HTTP server in this process (its
 * queue API under /v2/<endpoint> and at the root, /openapi.json with the worker's input
 * schema, /docs; input the schema refuses is answered 400), with this worker as a
 * supervised child process joined over the worker API (supervisor.ts), so that curl and
 * the official clients call the worker as they would call the service. Prints the base URL and a ready-to-paste curl example on stdout (a
 * parent process can read the port from the `http://host:port` in it) once the worker
 * is ready. SIGTERM or SIGINT drains the worker, closes the server, and exits with the
 * worker's code (0 after a clean drain).
 *
 * Flags (`--host`, `--port`, `--api-key`, `--insecure-no-auth`, `--no-rate-limit`):
 * declared with their defaults in worker/worker-flags.ts.
 */
import { dirname, resolve } from 'node:path';
import type { Logger } from 'pino';
import { composeHarness, type ComposedHarness } from '../harness/compose.js';
import type { HarnessServer } from '../harness/server-api.js';
import { toDocumentSchema, type EndpointInputSpec } from '../harness/openapi/index.js';
import { rateLimitTable, type HarnessServerConfig } from '../harness/server-options.js';
import {
  API_KEY_ENV,
  compactWhenIdle,
  createGpuSampler,
  DEFAULT_SERVE_HOST,
  DEFAULT_SERVE_PORT,
  type Handler,
  type JobRequest,
  jsonLineFormatter,
  type PlatformServeApi,
  loadMetrics,
  onShutdownSignals,
  resolveTestInput,
  ServerlessWorkerError,
  validateInput,
  type WorkerArgs,
  type WorkerConfig,
} from 'serverless-worker/internal';
import { WorkerSupervisor } from './supervisor.js';
import { tierUpSooner } from './tiering.js';
import { PLATFORM_VERSION } from '../platform-version.js';
import { WorkerApiDirect } from '../harness/worker-api/index.js';
import { relayChildLog } from './child-log-lines.js';
import { watchSources, type SourceWatch } from './source-watch.js';
import { JobLogBuffer } from '../harness/dashboard/job-log-tap.js';
// The platform's error codes, registered before any error is raised or answered.
import '../job/platform-error-codes.js';

export { PLATFORM_VERSION };

/** Quote `text` for a POSIX shell. */
export function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

/** The rate limits in force, one line: `/runsync 2000 per 10 s (400 at once), ...`, or that they are off. */
export function describeRateLimits(rateLimits: HarnessServerConfig['rateLimits']): string {
  if (rateLimits === false) return 'rate limits: off (--no-rate-limit)';
  const table = rateLimitTable(rateLimits.limits);
  const seconds = rateLimits.windowMs / 1000;
  const shown = (['runsync', 'run', 'status', 'stream', 'cancel'] as const).map((operation) => {
    const { perWindow, concurrent } = table[operation];
    return `/${operation} ${perWindow} per ${seconds} s${concurrent !== null ? ` (${concurrent} at once)` : ''}`;
  });
  return `rate limits (the platform's, per endpoint: 429 past them; --no-rate-limit turns them off): ${shown.join(', ')}`;
}

/** The lines printed at start: where the API is, a curl command that runs one job, and the rate limits in force. */
export function serveBanner(
  server: Pick<HarnessServer, 'url' | 'authenticated'> & {
    readonly config?: Pick<HarnessServerConfig, 'rateLimits'>;
    readonly dashboardUrl?: string | undefined;
  },
  endpointId: string,
  example: JobRequest | undefined,
): string {
  const base = `${server.url}/v2/${endpointId}`;
  const body = JSON.stringify(example ?? { input: {} });
  const auth = server.authenticated ? ` -H "Authorization: Bearer $${API_KEY_ENV}"` : '';
  return [
    `serverless-worker: queue API of endpoint "${endpointId}" listening on ${base}` +
      (server.authenticated ? ' (API key required)' : ' (no API key: loopback only)'),
    `  try:    curl -X POST ${base}/runsync -H 'content-type: application/json'${auth} -d ${shellQuote(body)}`,
    `  also at the root: ${server.url}/runsync, /run, /status/<id>, /stream/<id>, /cancel/<id>, /health`,
    `  docs:   ${server.url}/docs  (OpenAPI: ${server.url}/openapi.json)`,
    `  OpenAI: base URL ${base}/openai/v1    metrics: ${server.url}/metrics    stop: Ctrl+C`,
    ...(server.config ? [`  ${describeRateLimits(server.config.rateLimits)}`] : []),
    ...(server.dashboardUrl !== undefined ? [`  dashboard: ${server.dashboardUrl} (in a browser)`] : []),
    '',
  ].join('\n');
}

/**
 * The curl example's body: --test-input, else test_input.json beside the worker
 * script, else in the working directory; none if absent or invalid.
 */
function exampleRequest(args: WorkerArgs): JobRequest | undefined {
  const script = process.argv[1];
  const source = args.testInput !== undefined ? { flag: args.testInput } : script ? { scriptDir: dirname(script) } : {};
  try {
    return resolveTestInput(source).request;
  } catch {
    return undefined;
  }
}

/**
 * The worker's inputSchema for the local API: documented in /openapi.json, and checked
 * at submission, so a caller gets 400 SW_INPUT_VALIDATION at once instead of a FAILED
 * job (the platform accepts any input; see the README).
 */
function endpointInput(config: WorkerConfig): EndpointInputSpec {
  const schema = config.inputSchema;
  if (!schema) return {};
  let jsonSchema: Record<string, unknown> | undefined;
  try {
    jsonSchema = toDocumentSchema(schema);
  } catch {
    // A schema JSON Schema cannot express (a custom type): documented as any object.
  }
  return { ...(jsonSchema ? { jsonSchema } : {}), check: (input) => validateInput(schema, input) };
}

function listenError(error: unknown, host: string, port: number): unknown {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL') {
    return new ServerlessWorkerError(
      'SW_INVALID_OPTIONS',
      `Cannot listen on ${host}:${port} (${code}); pass another --port (0 picks a free one) or --host`,
      { host, port },
      { cause: error },
    );
  }
  return error;
}

/** The variable that chooses how the supervised worker reaches the harness: `ipc` (default) or `http`. */
export const SERVE_API_CHANNEL_ENV = 'SW_SERVE_API_CHANNEL';

/**
 * How the worker child is joined: `ipc` (its jobs and results over its IPC channel,
 * heartbeat and stops over HTTP), or `http` (the whole worker API over HTTP, as a
 * platform worker; for comparisons and as a way back).
 * @throws ServerlessWorkerError SW_INVALID_ENV naming the variable and its values.
 */
export function serveApiChannel(env: NodeJS.ProcessEnv): 'ipc' | 'http' {
  const value = env[SERVE_API_CHANNEL_ENV];
  if (value === undefined || value === '' || value === 'ipc') return 'ipc';
  if (value === 'http') return 'http';
  throw new ServerlessWorkerError(
    'SW_INVALID_ENV',
    `${SERVE_API_CHANNEL_ENV} must be "ipc" (the default) or "http", not ${JSON.stringify(value.slice(0, 40))}`,
    {
      variable: SERVE_API_CHANNEL_ENV,
    },
  );
}

/** The worker's heartbeat interval under --serve-api (the platform's default), ms: the harness and the child agree on it. */
export const SERVE_API_PING_MS = 10_000;
/**
 * How long after a burst of requests is over (idle-compaction.ts's quiet check, 5.5 s without a young
 * collection) this process keeps its young generation, ms: a burst within about half a minute of
 * the last runs on it (bench/README, issue 46, burst after idle); a longer pause gives its 32 MiB
 * back. The full step's time does not move (30 s after the quiet check).
 */
export const YOUNG_STEP_AFTER_MS = 25_000;
/** Past the child's own drain (shutdownTimeoutMs, then timeoutGraceMs), how long it may take to exit before SIGKILL, ms. */
const CHILD_EXIT_MARGIN_MS = 5_000;

/**
 * The local API in this process, the worker in a supervised child process
 * (supervisor.ts): the parent never runs the handler or `init`, so nothing a handler
 * does (ignoring its signal, blocking the loop, process.exit) takes the API down.
 */
export async function runServeApi(_handler: Handler<unknown, unknown>, config: WorkerConfig, args: WorkerArgs, logger: Logger): Promise<void> {
  // Before the request path runs: its functions are then optimized within a few thousand requests (tiering.ts).
  tierUpSooner();
  const host = args.host ?? DEFAULT_SERVE_HOST;
  const port = args.port ?? DEFAULT_SERVE_PORT;
  const apiKey = args.apiKey ?? (process.env[API_KEY_ENV] || undefined);
  const sampler = config.gpuSampling ? createGpuSampler({ intervalMs: config.gpuSampleIntervalMs }) : undefined;
  const example = exampleRequest(args);
  // Made once the server listens; the dashboard's GPU job log asks it which workers are its children.
  let supervisor: WorkerSupervisor | undefined;
  // The job page shows each job's own lines: the child's JSON lines that name a job are kept here (child-log-lines.ts).
  const jobLogs = new JobLogBuffer();
  const childLine = jsonLineFormatter();
  const localWorkers = (endpointId: string, workerId: string): boolean => endpointId === config.endpointId && supervisor?.started(workerId) === true;
  // The server listens before the worker starts, so that a port in use or a refused
  // bind ends start-up with its one error and nothing else (no worker to stop).
  let app: ComposedHarness;
  // The worker API's calls, for the child's IPC channel (SW_SERVE_API_CHANNEL=http keeps it on HTTP alone).
  const direct = new WorkerApiDirect();
  const channel = serveApiChannel(process.env);
  try {
    app = await composeHarness({
      // Jobs of a local API live in this process (SW_HARNESS_STORE is the harness command's).
      store: 'memory',
      // The worker's endpoint is declared, not made on first use (which the harness warns about, as a possible typo).
      harnessOptions: { endpoints: [config.endpointId] },
      host,
      port,
      ...(apiKey !== undefined ? { apiKey } : {}),
      allowUnauthenticatedNonLoopback: args.insecureNoAuth,
      ...(args.rateLimit ? {} : { rateLimits: false as const }),
      logger: logger.child({ component: 'harness' }),
      // Process metrics from the first /metrics scrape on: an idle server runs no event-loop monitor.
      metrics: await loadMetrics({ defaultMetrics: 'from-first-read' }),
      rootEndpoint: config.endpointId,
      endpointInputs: { [config.endpointId]: endpointInput(config) },
      workerApi: { liveness: { pingIntervalMs: SERVE_API_PING_MS }, direct },
      dashboard: { ...(example !== undefined ? { testInput: example } : {}), ...(sampler ? { gpu: sampler, localWorkers } : {}), jobLogs },
    });
  } catch (error) {
    await sampler?.close();
    throw listenError(error, host, port);
  }
  const { harness, server } = app;
  supervisor = new WorkerSupervisor({
    endpoint: harness.endpoint(config.endpointId),
    url: server.url,
    apiKey,
    pingIntervalMs: SERVE_API_PING_MS,
    workerId: config.workerId,
    channel: channel === 'ipc' ? direct.calls : undefined,
    stopBoundMs: config.shutdownTimeoutMs + config.timeoutGraceMs + CHILD_EXIT_MARGIN_MS,
    logger,
    // The child logs JSON (it is a platform-mode worker); on a terminal its lines are shown as this process's are.
    onStderr: (stream) =>
      relayChildLog(stream, jobLogs, (lines) => process.stderr.write(lines.map((line) => (childLine ? childLine(line) : `${line}\n`)).join(''))),
    // What its handler prints on stdout is a JSON line of its job there (worker/job-output.ts): kept for the job page, shown as on stderr.
    onStdout: (stream) =>
      relayChildLog(stream, jobLogs, (lines) => process.stdout.write(lines.map((line) => (childLine ? childLine(line) : `${line}\n`)).join(''))),
  });
  let signalled!: () => void;
  const signal = new Promise<'signal'>((resolve) => (signalled = () => resolve('signal')));
  const offSignals = onShutdownSignals(logger, () => signalled());
  supervisor.start();
  // --watch: a saved source file restarts the worker child alone; this process, its API and its jobs stay (source-watch.ts).
  const watching = args.watch ? watchWorkerSources(supervisor, logger) : undefined;
  // The heap a burst of jobs grew is given back once it is over (the worker child does the same); the
  // young generation only after a longer pause, so that a burst soon after runs on it (local/idle-compaction.ts).
  const compaction = compactWhenIdle({ youngAfterMs: YOUNG_STEP_AFTER_MS });
  // The banner once the worker is ready (its init over), as when it ran in this process.
  const first = await Promise.race([supervisor.firstStart, signal]);
  if (first !== 'signal' && first.ready) {
    process.stdout.write(serveBanner(server, config.endpointId, example));
    await signal;
  }
  logger.info({ reason: first === 'signal' || first.ready ? 'signal' : 'worker start-up failed' }, 'serve-api: closing');
  const exitCode = first !== 'signal' && !first.ready ? first.exitCode || 1 : await supervisor.stop();
  watching?.close();
  offSignals();
  compaction.stop();
  // The server, then the harness composeHarness made.
  await app.close();
  await sampler?.close();
  logger.flush();
  process.stdout.write('', () => process.exit(exitCode));
}

/** Watch the worker script's folder; each burst of changes restarts the supervised child. */
function watchWorkerSources(supervisor: WorkerSupervisor, logger: Logger): SourceWatch | undefined {
  const script = process.argv[1];
  if (script === undefined || script === '') {
    logger.warn('--watch: no worker script to watch (process.argv[1] is empty); the worker is not restarted on changes');
    return undefined;
  }
  const dir = dirname(resolve(script));
  logger.info({ dir }, '--watch: a change under this folder restarts the worker process (the API and its jobs stay)');
  return watchSources(dir, (file) => supervisor.restart(`${file} changed`));
}

// The SDK loads this entry point by the contract it declares (local/platform-contract.ts there).
void ({ PLATFORM_VERSION, runServeApi } satisfies PlatformServeApi);
