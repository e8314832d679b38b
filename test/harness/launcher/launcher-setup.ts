/**
 * @module test/harness/launcher/launcher-setup
 * A harness server on 127.0.0.1 port 0 with its management store and a Launcher that
 * runs the platform fixture worker (a real child process using the platform
 * transport) for templates whose imageName is `test/worker:1`. Endpoints are made
 * through /v1 as a client would; the launcher's log lines are kept for assertions.
 */
import { fileURLToPath } from 'node:url';
import { Writable } from 'node:stream';
import pino from 'pino';
import { Harness } from '../../../src/harness/index.js';
import type { HarnessServer } from '../../../packages/platform/src/harness/server-api.js';
import { Launcher, type LaunchBackend, type LauncherOptionsInput, type WorkerLogLine } from '../../../packages/platform/src/harness/launcher/index.js';
import { InMemoryManagementStore, type Endpoint, type Template } from '../../../packages/platform/src/harness/management/index.js';
import type { JobStore } from '../../../src/harness/store/job-store.js';
import { createMetrics } from '../../../src/metrics/index.js';
import { FIXTURE, REPO_ROOT } from '../../platform/worker-process.js';
import { fetchOkJson, startHarnessServer } from '../../kit/index.js';
import { nodeCommandFor } from '../../compiled-fixtures.js';

export const TEST_IMAGE = 'test/worker:1';
/** The platform fixture worker, as a launcher command. */
export const FIXTURE_COMMAND = nodeCommandFor(FIXTURE);
/** The launcher fixture worker (init delay or failure, SIGTERM ignored: fixtures/launcher-worker.ts), as a launcher command. */
export const LAUNCHER_WORKER_PATH = fileURLToPath(new URL('./fixtures/launcher-worker.ts', import.meta.url));
export const LAUNCHER_WORKER_COMMAND = nodeCommandFor(LAUNCHER_WORKER_PATH);

export interface LauncherHarness {
  readonly harness: Harness;
  readonly server: HarnessServer;
  readonly launcher: Launcher;
  /** The launcher's and the server's log lines, parsed. */
  readonly logLines: Array<Record<string, unknown>>;
  /** A call to the harness's HTTP API (JSON in and out; a non-2xx answer throws). */
  json<T>(method: string, path: string, body?: unknown): Promise<T>;
  /** Create a template (imageName TEST_IMAGE unless given) and an endpoint on it. */
  createEndpoint(endpoint: Record<string, unknown>, template?: Record<string, unknown>): Promise<Endpoint>;
  /** POST /v2/{endpoint}/run; answers the job id. */
  run(endpointId: string, input: unknown, policy?: Record<string, unknown>): Promise<string>;
  status(endpointId: string, jobId: string): Promise<{ status: string; output?: unknown }>;
  health(endpointId: string): Promise<{ workers: Record<string, number>; healthy?: boolean; unhealthyReason?: string }>;
  /** The fixture's stdout events from the launched workers' logs. */
  events(endpointId: string): Array<{ event: string; jobId?: string; workerId?: string }>;
  logs(endpointId: string): Promise<WorkerLogLine[]>;
  close(): Promise<void>;
}

let templates = 0;

/**
 * `jobStore`: the harness's job store (a PostgresJobStore); default in memory.
 * `containers`: a container backend (DockerBackend); the fixture command then runs only if `options.images` names it.
 */
export async function startLauncherHarness(
  options: Partial<LauncherOptionsInput> = {},
  jobStore?: JobStore,
  containers?: LaunchBackend,
): Promise<LauncherHarness> {
  const logLines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) logLines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const logger = pino({ level: 'info' }, sink);
  const harness = new Harness({ autoCreateEndpoints: false, ...(jobStore ? { store: jobStore } : {}) });
  const store = new InMemoryManagementStore();
  const metrics = createMetrics({ defaultMetrics: false });
  const launcher = new Launcher(
    { images: containers ? {} : { [TEST_IMAGE]: { command: FIXTURE_COMMAND, cwd: REPO_ROOT } }, tickMs: 100, shutdownDeadlineMs: 5_000, ...options },
    { harness, store, logger, metrics, ...(containers ? { containers } : {}) },
  );
  const server = await startHarnessServer({ harness, management: { store }, logger, metrics, launchedWorkers: launcher });
  launcher.start({ url: server.url, pingIntervalMs: 1_000 });

  const json = <T>(method: string, path: string, body?: unknown): Promise<T> => fetchOkJson<T>(`${server.url}${path}`, method, body);

  return {
    harness,
    server,
    launcher,
    logLines,
    json,
    async createEndpoint(endpoint, template = {}) {
      templates += 1;
      const t = await json<Template>('POST', '/v1/templates', {
        name: `launcher-test-${templates}`,
        imageName: TEST_IMAGE,
        isServerless: true,
        category: 'CPU',
        env: { LOG_LEVEL: 'warn' },
        ...template,
      });
      return json<Endpoint>('POST', '/v1/endpoints', { templateId: t.id, ...endpoint });
    },
    async run(endpointId, input, policy) {
      return (await json<{ id: string }>('POST', `/v2/${endpointId}/run`, { input, ...(policy ? { policy } : {}) })).id;
    },
    status: (endpointId, jobId) => json('GET', `/v2/${endpointId}/status/${jobId}`),
    health: (endpointId) => json('GET', `/v2/${endpointId}/health`),
    events(endpointId) {
      return launcher
        .logs(endpointId)
        .filter((entry) => entry.stream === 'stdout' && entry.line.startsWith('{'))
        .map((entry) => JSON.parse(entry.line) as { event: string; jobId?: string; workerId?: string });
    },
    logs: async (endpointId) => (await json<{ lines: WorkerLogLine[] }>('GET', `/v2/${endpointId}/logs?limit=100000`)).lines,
    async close() {
      await launcher.close();
      await server.close();
      await harness.close();
    },
  };
}

/** Messages of the log lines that carry `field` = `value`. */
export function messagesWith(lines: Array<Record<string, unknown>>, field: string, value: unknown): string[] {
  return lines.filter((line) => line[field] === value).map((line) => String(line.msg));
}
