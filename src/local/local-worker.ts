/**
 * @module local/local-worker
 * A harness and a worker in one process, joined by the in-process transport: the
 * base of the dry run and of `--serve-api`.
 */
import type { Logger } from 'pino';
import { createGpuSampler, type GpuSampler } from '../gpu/index.js';
import { Harness, type EndpointJobs } from '../harness/index.js';
import type { Metrics } from '../metrics/index.js';
import { InProcessTransport } from '../transports/index.js';
import { WorkerRuntime, createJobTelemetry, type Handler, type WorkerConfig, type WorkerExit } from '../worker/index.js';

export interface LocalWorker {
  readonly harness: Harness;
  readonly endpoint: EndpointJobs;
  readonly runtime: WorkerRuntime;
  readonly transport: InProcessTransport;
  /** Present when config.gpuSampling; closed by `stop`. */
  readonly sampler: GpuSampler | undefined;
  /** Stop the worker (graceful), write the last job summary line, close the sampler; answers the worker's exit. */
  stop(): Promise<WorkerExit>;
}

export interface LocalWorkerOptions {
  /** The harness to join; default a new one. */
  harness?: Harness;
  /** Worker-side metrics; default none. */
  metrics?: Metrics;
  /** One info line per finished job whatever config.logEveryJob says (the dry run's one job); default config.logEveryJob. */
  logEveryJob?: boolean;
}

export function startLocalWorker(handler: Handler<unknown>, config: WorkerConfig, logger: Logger, options: LocalWorkerOptions | Harness = {}): LocalWorker {
  const { harness = new Harness(), metrics, logEveryJob = config.logEveryJob } = options instanceof Harness ? { harness: options } : options;
  const endpoint = harness.endpoint(config.endpointId);
  const transport = new InProcessTransport({ endpoint, ...(config.workerId ? { workerId: config.workerId } : {}) });
  const sampler = config.gpuSampling ? createGpuSampler({ intervalMs: config.gpuSampleIntervalMs }) : undefined;
  const telemetry = createJobTelemetry({
    logger,
    logEveryJob,
    summaryIntervalMs: config.jobSummaryIntervalMs,
    ...(metrics ? { metrics } : {}),
    ...(sampler ? { sampler } : {}),
  });
  const runtime = new WorkerRuntime(handler, config, transport, logger, telemetry);
  void runtime.start();
  return {
    harness,
    endpoint,
    runtime,
    transport,
    sampler,
    async stop() {
      const exit = await runtime.stop();
      telemetry.flush();
      await sampler?.close();
      return exit;
    },
  };
}
