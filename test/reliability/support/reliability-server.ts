/**
 * @module test/reliability/support/reliability-server
 * The harness server (`createHarnessServer`, the real wiring) on 127.0.0.1 port 0 as
 * the reliability tests need it: worker API settings (liveness, long-poll hold) scaled
 * for tests, rate limits off unless given, and what the worker API saw recorded.
 */
import pino from 'pino';
import { Harness, type ResultAck } from '../../../src/harness/index.js';
import {
  createHarnessServer,
  type HarnessServer,
  type HarnessServerOptions,
  type WorkerApiPassThrough,
} from '../../../packages/platform/src/harness/server-api.js';
import { workerEnvFor, type WorkerEnv } from '../../../packages/platform/src/harness/worker-api/index.js';
import { createMetrics } from '../../../src/metrics/index.js';

export interface SeenEvents {
  pings: number;
  results: Array<{ workerId: string; jobId: string; ack: ResultAck }>;
  /** `at`: performance.now() when it was seen; `epochMs`: Date.now() then (the harness clock). */
  gone: Array<{ workerId: string; requeued: string[]; reason: string; at: number; epochMs: number }>;
  lost: Array<{ workerId: string; requeued: string[]; at: number; epochMs: number }>;
  /** Results that asked for the worker to be recycled (stopPod). */
  stopPods: Array<{ workerId: string; jobId: string }>;
  /** Every job id a heartbeat listed, with the worker that listed it. */
  pingedJobs: Array<{ workerId: string; jobId: string }>;
}

export interface ReliabilityServer {
  readonly harness: Harness;
  readonly server: HarnessServer;
  /** `http://127.0.0.1:<port>` */
  readonly origin: string;
  readonly seen: SeenEvents;
  /** The worker variables for `endpointId` at `origin` (the proxy's, or this server's). */
  envFor(endpointId: string, pingIntervalMs: number, origin?: string): WorkerEnv;
  close(): Promise<void>;
}

export interface ReliabilityServerOptions extends Partial<Omit<HarnessServerOptions, 'harness' | 'host' | 'port' | 'workerApi'>> {
  readonly harness?: Harness;
  /** Worker API settings: liveness, longPollMs, ... (events are recorded in `seen`). */
  readonly workerApi?: Omit<WorkerApiPassThrough, 'events'>;
}

export async function startReliabilityServer(options: ReliabilityServerOptions = {}): Promise<ReliabilityServer> {
  const { harness = new Harness(), workerApi, ...rest } = options;
  const seen: SeenEvents = { pings: 0, results: [], gone: [], lost: [], stopPods: [], pingedJobs: [] };
  const server = await createHarnessServer({
    rateLimits: false,
    logger: pino({ level: 'silent' }),
    metrics: createMetrics({ defaultMetrics: false }),
    ...rest,
    harness,
    host: '127.0.0.1',
    port: 0,
    workerApi: {
      ...workerApi,
      events: {
        onPing: ({ workerId, jobIds }) => {
          seen.pings++;
          for (const jobId of jobIds) if (!seen.pingedJobs.some((p) => p.jobId === jobId && p.workerId === workerId)) seen.pingedJobs.push({ workerId, jobId });
        },
        onStopPod: ({ workerId, jobId }) => void seen.stopPods.push({ workerId, jobId }),
        onResult: ({ workerId, jobId, ack }) => void seen.results.push({ workerId, jobId, ack }),
        onWorkerGone: ({ workerId, requeued, reason }) => void seen.gone.push({ workerId, requeued, reason, at: performance.now(), epochMs: Date.now() }),
        onJobsLost: ({ workerId, requeued }) => void seen.lost.push({ workerId, requeued, at: performance.now(), epochMs: Date.now() }),
      },
    },
  });
  return {
    harness,
    server,
    origin: server.url,
    seen,
    envFor: (endpointId, pingIntervalMs, at = server.url) =>
      workerEnvFor(at, endpointId, { pingIntervalMs, ...(options.apiKey !== undefined ? { apiKey: options.apiKey } : {}) }),
    close: async () => {
      await server.close();
      await harness.close();
    },
  };
}
