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
import { DEFAULT_MAX_RESULT_BYTES } from '../transports/result-limits.js';
import { Watchdog } from '../transports/watchdog/index.js';
import { RUNTIME_VERSION } from '../version.js';
import { WorkerRuntime, createJobTelemetry, reportedHostname, type Handler, type WorkerConfig, type WorkerExit } from '../worker/index.js';

export interface LocalWorker {
  readonly harness: Harness;
  readonly endpoint: EndpointJobs;
  readonly runtime: WorkerRuntime;
  readonly transport: InProcessTransport;
  /** Present when config.gpuSampling; closed by `stop`. */
  readonly sampler: GpuSampler | undefined;
  /** Resolves once the watchdog thread (if any) is up: compiled, at once; under tsx, once it loaded its TypeScript. */
  readonly watchdogReady: Promise<void>;
  /** True once the deadline watchdog fired: it reports the job and ends the process itself (read synchronously, in an 'exit' listener). */
  readonly watchdogFired: () => boolean;
  /** Stop the worker (graceful), write the last job summary line, close the watchdog and the sampler; answers the worker's exit. */
  stop(): Promise<WorkerExit>;
}

export interface LocalWorkerOptions {
  /** The harness to join; default a new one. */
  harness?: Harness;
  /** Worker-side metrics; default none. */
  metrics?: Metrics;
  /**
   * A deadline watchdog thread (when config.deadlineWatchdog): a job blocking the event
   * loop past its timeout plus grace ends the process with exit code 1 after the dry
   * run's final record (`dry-run`) or one line on stderr (`exit`). Default none.
   */
  watchdog?: 'dry-run' | 'exit';
  /** One info line per finished job whatever config.logEveryJob says (the dry run's one job); default config.logEveryJob. */
  logEveryJob?: boolean;
  /** The GPU sampler to use (closed by `stop`); default one made here when config.gpuSampling. */
  sampler?: GpuSampler;
}

export function startLocalWorker(handler: Handler<unknown>, config: WorkerConfig, logger: Logger, options: LocalWorkerOptions | Harness = {}): LocalWorker {
  const {
    harness = new Harness(),
    metrics,
    watchdog: fireKind,
    logEveryJob = config.logEveryJob,
    sampler = config.gpuSampling ? createGpuSampler({ intervalMs: config.gpuSampleIntervalMs }) : undefined,
  } = options instanceof Harness ? { harness: options } : options;
  const endpoint = harness.endpoint(config.endpointId);
  // The platform's result limit here too (platformTransport.maxResultBytes, default 20 MB): a result
  // the worker API would refuse fails the same way in the dry run, --serve-api and runJob.
  const maxResultBytes = config.platformTransport?.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES;
  const transport = new InProcessTransport({ endpoint, maxResultBytes, ...(config.workerId ? { workerId: config.workerId } : {}) });
  const telemetry = createJobTelemetry({
    logger,
    logEveryJob,
    summaryIntervalMs: config.jobSummaryIntervalMs,
    clock: harness.clock,
    ...(metrics ? { metrics } : {}),
    ...(sampler ? { sampler } : {}),
  });
  const watchdog =
    fireKind !== undefined && config.deadlineWatchdog
      ? new Watchdog({
          logger,
          timeoutGraceMs: config.timeoutGraceMs,
          slots: typeof config.concurrency === 'number' ? config.concurrency : 256,
          fire: { kind: fireKind },
          origin: { workerId: transport.workerId, hostname: reportedHostname(), version: RUNTIME_VERSION },
          jsonLogs: false,
        })
      : undefined;
  // Jobs go on its board from the start; the thread reads them once it is up.
  const jobWatch = watchdog?.start() ? watchdog : undefined;
  // One process, one clock: the worker's timeouts run on the harness's clock (runJob's ManualClock moves both).
  const runtime = new WorkerRuntime(handler, config, transport, logger, telemetry, { clock: harness.clock, ...(jobWatch ? { jobWatch } : {}) });
  void runtime.start();
  return {
    harness,
    endpoint,
    runtime,
    transport,
    sampler,
    watchdogReady: jobWatch ? jobWatch.ready : Promise.resolve(),
    watchdogFired: () => jobWatch?.board.fired ?? false,
    async stop() {
      const exit = await runtime.stop();
      telemetry.flush();
      await watchdog?.stop();
      await sampler?.close();
      return exit;
    },
  };
}
