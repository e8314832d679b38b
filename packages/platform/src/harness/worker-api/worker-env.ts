/**
 * @module harness/worker-api/worker-env
 * The RUNPOD_WEBHOOK_* values that make a worker process (ours, or one written with
 * the platform's Python SDK) take its jobs from a harness instead of the platform, in
 * the exact shapes the platform uses. `serverless-worker harness` prints them.
 */

export interface WorkerEnvOptions {
  /** The harness's API key, as RUNPOD_AI_API_KEY; default none. */
  apiKey?: string;
  /** RUNPOD_PING_INTERVAL, ms: keep it equal to the harness's liveness.pingIntervalMs; default 10 000. */
  pingIntervalMs?: number;
}

/** The variables, in the order they are printed. */
export type WorkerEnv = Readonly<Record<string, string>>;

/**
 * The worker variables for the harness at `baseUrl` (its origin, e.g.
 * `http://127.0.0.1:8000`, with or without a trailing `/v2`) and endpoint `endpointId`.
 * RUNPOD_POD_ID is left out: each worker process then picks its own random id (set it
 * to name a worker).
 */
export function workerEnvFor(baseUrl: string, endpointId: string, options: WorkerEnvOptions = {}): WorkerEnv {
  const trimmed = baseUrl.replace(/\/+$/, '');
  const v2 = trimmed.endsWith('/v2') ? trimmed : `${trimmed}/v2`;
  const base = `${v2}/${encodeURIComponent(endpointId)}`;
  return Object.freeze({
    RUNPOD_WEBHOOK_GET_JOB: `${base}/job-take/$ID?`,
    RUNPOD_WEBHOOK_POST_OUTPUT: `${base}/job-done/$RUNPOD_POD_ID/$ID?`,
    RUNPOD_WEBHOOK_POST_STREAM: `${base}/job-stream/$RUNPOD_POD_ID/$ID?`,
    RUNPOD_WEBHOOK_PING: `${base}/ping/$RUNPOD_POD_ID`,
    RUNPOD_PING_INTERVAL: String(options.pingIntervalMs ?? 10_000),
    RUNPOD_ENDPOINT_ID: endpointId,
    ...(options.apiKey !== undefined ? { RUNPOD_AI_API_KEY: options.apiKey } : {}),
  });
}

/**
 * The variables as text: `shell` gives `export NAME='value'` lines (single quotes, so
 * the shell leaves `$ID` alone); `dotenv` gives `NAME=value` lines for
 * `docker run --env-file` (which takes values literally). Default `shell`.
 */
export function formatWorkerEnv(env: WorkerEnv, style: 'shell' | 'dotenv' = 'shell'): string {
  const lines = Object.entries(env).map(([name, value]) => (style === 'dotenv' ? `${name}=${value}` : `export ${name}='${value.replaceAll("'", `'\\''`)}'`));
  return `${lines.join('\n')}\n`;
}
