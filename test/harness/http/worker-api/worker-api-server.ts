/**
 * @module test/harness/http/worker-api/worker-api-server
 * A real fastify app on 127.0.0.1 port 0 with the shared error handler and the worker
 * API under /v2, as the harness server wires it, recording what the worker API saw.
 * `beforeRoutes` may add hooks first (fault injection).
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { Harness } from '../../../../src/harness/index.js';
import { installErrorHandler } from '../../../../packages/platform/src/harness/http/error-reply.js';
import { workerApiRoutes, workerEnvFor, type WorkerApiOptions, type WorkerEnv } from '../../../../packages/platform/src/harness/worker-api/index.js';
import type { ResultAck } from '../../../../src/harness/index.js';

export interface SeenPing {
  at: number;
  workerId: string;
  jobIds: string[];
  version?: string;
}

export interface SeenResult {
  at: number;
  workerId: string;
  jobId: string;
  ack: ResultAck;
}

export interface WorkerApiRecord {
  pings: SeenPing[];
  results: SeenResult[];
  gone: Array<{ workerId: string; requeued: string[]; reason: string }>;
  stopPods: Array<{ workerId: string; jobId: string }>;
  unhealthy: Array<{ workerId: string; check: string; reason: string }>;
}

export interface RunningWorkerApi {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  harness: Harness;
  app: FastifyInstance;
  seen: WorkerApiRecord;
  /** The worker variables for `endpointId` (RUNPOD_PING_INTERVAL from `pingIntervalMs`). */
  envFor(endpointId: string, pingIntervalMs?: number): WorkerEnv;
  close(): Promise<void>;
}

export interface StartOptions extends Partial<Omit<WorkerApiOptions, 'events'>> {
  beforeRoutes?: (app: FastifyInstance) => void;
}

export async function startWorkerApiServer(options: StartOptions = {}): Promise<RunningWorkerApi> {
  const { beforeRoutes, ...rest } = options;
  const harness = options.harness ?? new Harness();
  const seen: WorkerApiRecord = { pings: [], results: [], gone: [], stopPods: [], unhealthy: [] };
  const app = Fastify({ logger: false, forceCloseConnections: true });
  installErrorHandler(app);
  beforeRoutes?.(app);
  await app.register(workerApiRoutes, {
    ...rest,
    harness,
    prefix: '/v2',
    events: {
      onPing: (info) => seen.pings.push({ at: Date.now(), ...info }),
      onResult: (info) => seen.results.push({ at: Date.now(), ...info }),
      onWorkerGone: (info) => seen.gone.push(info),
      onStopPod: (info) => seen.stopPods.push(info),
      onUnhealthy: (info) => seen.unhealthy.push(info),
    },
  });
  const origin = await app.listen({ host: '127.0.0.1', port: 0 });
  return {
    origin,
    harness,
    app,
    seen,
    envFor: (endpointId, pingIntervalMs) =>
      workerEnvFor(origin, endpointId, {
        ...(options.apiKey !== undefined ? { apiKey: options.apiKey } : {}),
        ...(pingIntervalMs !== undefined ? { pingIntervalMs } : {}),
      }),
    close: async () => {
      await app.close();
      await harness.close();
    },
  };
}
