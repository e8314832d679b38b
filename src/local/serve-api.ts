/**
 * @module local/serve-api
 * `--serve-api` (or `--rp_serve_api`): the harness's HTTP server with this worker in
 * process, so that curl and the official clients call the worker as they would call
 * the service. Prints the base URL and a ready-to-paste curl example on stdout (a
 * parent process can read the port from the `http://host:port` in it). SIGTERM or
 * SIGINT closes the server, drains the worker, and exits 0.
 *
 * Flags: `--host` (default 127.0.0.1), `--port` (default 8000; 0 picks a free one),
 * `--api-key` (default SERVERLESS_WORKER_API_KEY), `--insecure-no-auth` (listen on a
 * non-loopback host without a key).
 */
import { dirname } from 'node:path';
import type { Logger } from 'pino';
import { Harness } from '../harness/index.js';
import { createHarnessServer, type HarnessServer } from '../harness/http/index.js';
import { ServerlessWorkerError, type JobRequest } from '../job/index.js';
import { createMetrics } from '../metrics/index.js';
import { onShutdownSignals, resolveTestInput, type Handler, type WorkerArgs, type WorkerConfig } from '../worker/index.js';
import { startLocalWorker } from './local-worker.js';

/** Environment variable read for the API key when --api-key is not given. */
export const API_KEY_ENV = 'SERVERLESS_WORKER_API_KEY';
export const DEFAULT_SERVE_HOST = '127.0.0.1';
export const DEFAULT_SERVE_PORT = 8000;

/** Quote `text` for a POSIX shell. */
export function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

/** The lines printed at start: where the API is and a curl command that runs one job. */
export function serveBanner(
  server: Pick<HarnessServer, 'url' | 'authenticated'> & { dashboardUrl?: string | undefined },
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
    `  OpenAI: base URL ${base}/openai/v1    metrics: ${server.url}/metrics    stop: Ctrl+C`,
    ...(server.dashboardUrl !== undefined ? [`  dashboard: ${server.dashboardUrl} (in a browser)`] : []),
    '',
  ].join('\n');
}

/**
 * The curl example's body: --test-input, else test_input.json in the working directory,
 * else beside the worker script; none if absent or invalid.
 */
function exampleRequest(args: WorkerArgs): JobRequest | undefined {
  const script = process.argv[1];
  const sources = [
    args.testInput !== undefined ? { flag: args.testInput } : {},
    ...(script !== undefined ? [{ cwd: dirname(script) }] : []),
  ];
  for (const source of sources) {
    try {
      return resolveTestInput(source).request;
    } catch {
      // Try the next place.
    }
  }
  return undefined;
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

export async function runServeApi(handler: Handler<unknown>, config: WorkerConfig, args: WorkerArgs, logger: Logger): Promise<void> {
  const host = args.host ?? DEFAULT_SERVE_HOST;
  const port = args.port ?? DEFAULT_SERVE_PORT;
  const apiKey = args.apiKey ?? (process.env[API_KEY_ENV] || undefined);
  const harness = new Harness();
  const local = startLocalWorker(handler, config, logger, harness);
  const example = exampleRequest(args);
  let server: HarnessServer;
  try {
    server = await createHarnessServer({
      harness,
      host,
      port,
      ...(apiKey !== undefined ? { apiKey } : {}),
      allowUnauthenticatedNonLoopback: args.insecureNoAuth,
      logger: logger.child({ component: 'harness' }),
      metrics: createMetrics(),
      dashboard: { ...(example !== undefined ? { testInput: example } : {}), ...(local.sampler ? { gpu: local.sampler } : {}) },
    });
  } catch (error) {
    await local.runtime.stop();
    harness.close();
    throw listenError(error, host, port);
  }
  process.stdout.write(serveBanner(server, config.endpointId, example));

  const reason = await new Promise<'signal' | 'worker-exited'>((resolve) => {
    const dispose = onShutdownSignals(logger, () => resolve('signal'));
    void local.runtime.start().then(() => {
      dispose();
      resolve('worker-exited');
    });
  });
  logger.info({ reason }, 'serve-api: closing');
  await server.close();
  const exit = await local.runtime.stop();
  harness.close();
  logger.flush();
  process.stdout.write('', () => process.exit(reason === 'signal' ? exit.exitCode : 1));
}
