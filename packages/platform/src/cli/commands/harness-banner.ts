/**
 * @module cli/commands/harness-banner
 * What `serverless-worker harness` prints on stdout once it listens: its routes, its
 * auth, and the RUNPOD_* lines a worker joins with.
 */
import type { HarnessServer } from '../../harness/server-api.js';
import { formatWorkerEnv, workerEnvFor } from '../../harness/worker-api/worker-env.js';

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
