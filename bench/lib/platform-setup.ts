/**
 * @module bench/lib/platform-setup
 * The harness as the platform (its HTTP server, worker API included, on 127.0.0.1 and
 * a free port) in the bench process, and worker processes pointed at it through the
 * RUNPOD_WEBHOOK_* variables, as `serverless-worker harness` would print them. The
 * harness runs on the precise clock, so job records carry sub-millisecond times.
 */
import type { ChildProcess } from 'node:child_process';
import { Harness, type EndpointJobs } from '../../src/harness/index.js';
import { createHarnessServer, type HarnessServer } from '../../packages/platform/src/harness/server-api.js';
import { workerEnvFor } from '../../packages/platform/src/harness/worker-api/index.js';
import { parseJobRequest, type JobRequest } from '../../src/job/index.js';
import type { StoredJob } from '../../src/harness/index.js';
import { spawnNode, stopChild } from './child.js';
import { childScript, type ChildRuntime } from './compiled.js';
import { preciseClock } from './clock.js';

export interface PlatformSetup {
  readonly harness: Harness;
  readonly server: HarnessServer;
  readonly endpoint: EndpointJobs;
  readonly worker: ChildProcess;
  close(): Promise<void>;
}

export interface PlatformSetupOptions {
  readonly endpointId: string;
  readonly concurrency: number;
  /** Extra variables for the worker process. */
  readonly env?: NodeJS.ProcessEnv;
  readonly nodeArgs?: readonly string[];
  /** How the worker process runs; default compiled JavaScript, as in a worker image. */
  readonly runtime?: ChildRuntime;
}

export async function startPlatformSetup(options: PlatformSetupOptions): Promise<PlatformSetup> {
  const harness = new Harness({ clock: preciseClock });
  // The spec's rate limits belong to the queue API a client calls; a benchmark's reader must not hit them.
  // BENCH_TAKE_ON_DONE=0: the worker API without the take on job-done (issue 47 item 6), for a before/after in one build.
  const workerApi = { takeOnDone: process.env.BENCH_TAKE_ON_DONE !== '0' };
  const server = await createHarnessServer({ harness, port: 0, management: false, rateLimits: false, workerApi });
  const endpoint = harness.endpoint(options.endpointId);
  const env = workerEnvFor(server.url, options.endpointId);
  const worker = spawnNode(await childScript('bench/children/platform-worker.ts', options.runtime ?? 'compiled'), {
    env: { ...env, RUNPOD_POD_ID: 'bench-worker', BENCH_CONCURRENCY: String(options.concurrency), LOG_LEVEL: 'info', ...options.env },
    ...(options.nodeArgs ? { nodeArgs: options.nodeArgs } : {}),
  });
  return {
    harness,
    server,
    endpoint,
    worker,
    async close() {
      await stopChild(worker);
      await server.close();
      await harness.close();
    },
  };
}

/** One request reused for every no-op job (parsing it is not what is measured). */
export const NOOP_REQUEST: JobRequest = parseJobRequest({ input: {} });

export interface BatchResult {
  readonly jobs: number;
  /** First hand-out to last result, ms. */
  readonly elapsedMs: number;
  /** Per job, hand-out to result received, ms. */
  readonly latencies: Float64Array;
  readonly records: StoredJob[];
}

/**
 * Submit `requests` and wait until every one has ended (any way); rejects after
 * `timeoutMs` with how many ended.
 */
export function runBatch(endpoint: EndpointJobs, requests: readonly JobRequest[], timeoutMs: number): Promise<BatchResult> {
  return new Promise((resolve, reject) => {
    const ids = new Set<string>();
    const latencies = new Float64Array(requests.length);
    const records: StoredJob[] = [];
    let ended = 0;
    let first = Number.POSITIVE_INFINITY;
    let last = 0;
    const off = endpoint.jobEnded.add((job) => {
      if (!ids.has(job.id)) return;
      const started = job.startedAt ?? job.submittedAt;
      const end = job.endedAt ?? preciseClock.now();
      latencies[ended++] = end - started;
      records.push(job);
      if (started < first) first = started;
      if (end > last) last = end;
      if (ended === requests.length) {
        clearTimeout(timer);
        off();
        resolve({ jobs: ended, elapsedMs: last - first, latencies, records });
      }
    });
    const timer = setTimeout(() => {
      off();
      reject(new Error(`only ${ended} of ${requests.length} jobs ended within ${timeoutMs} ms`));
    }, timeoutMs);
    void (async () => {
      for (const request of requests) ids.add((await endpoint.submit(request)).id);
    })().catch(reject);
  });
}
