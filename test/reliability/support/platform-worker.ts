/**
 * @module test/reliability/support/platform-worker
 * A worker in the test's own process on the real platform transport (HTTP, retries,
 * off-thread heartbeat, job-stop poll): the runtime and transport a worker process
 * runs, with transport settings scaled for tests (a dropped post costs one request
 * timeout, not 30 s).
 */
import type { Logger } from 'pino';
import pino from 'pino';
import type { WorkerEnv } from '../../../packages/platform/src/harness/worker-api/index.js';
import { createPlatformTransport, type PlatformTransport, type PlatformTransportSettingsInput } from '../../../src/transports/platform/index.js';
import { WorkerRuntime, resolveOptions, type Handler, type ServeOptions, type WorkerExit } from '../../../src/worker/index.js';
import { countingMetrics } from '../../transports/platform/log-capture.js';

/** Transport settings for tests: short polls and timeouts, quick retries, a long result deadline. */
export const TEST_TRANSPORT: PlatformTransportSettingsInput = Object.freeze({
  pollTimeoutMs: 1_500,
  emptyPollGapMs: 0,
  pollBackoffMinMs: 10,
  pollBackoffMaxMs: 200,
  requestTimeoutMs: 1_500,
  resultDeadlineMs: 120_000,
  retryMinDelayMs: 10,
  retryMaxDelayMs: 200,
  closeDrainMs: 5_000,
});

export interface InProcessWorker {
  readonly workerId: string;
  readonly runtime: WorkerRuntime;
  readonly transport: PlatformTransport;
  readonly metrics: ReturnType<typeof countingMetrics>;
  readonly exited: Promise<WorkerExit>;
  stop(): Promise<WorkerExit>;
}

export interface InProcessWorkerOptions {
  readonly env: WorkerEnv;
  readonly workerId: string;
  readonly handler: Handler<never>;
  readonly serve?: ServeOptions;
  readonly transport?: PlatformTransportSettingsInput;
  readonly logger?: Logger;
}

export function startInProcessWorker(options: InProcessWorkerOptions): InProcessWorker {
  const logger = options.logger ?? pino({ level: 'silent' });
  const metrics = countingMetrics();
  const transport = createPlatformTransport({
    ...TEST_TRANSPORT,
    ...options.transport,
    processEnv: { ...options.env, RUNPOD_POD_ID: options.workerId },
    logger,
    metrics,
  });
  // One chunk per yield (coalescing, the default, is off here): these tests follow the fate of
  // each chunk post under faults. Coalescing under faults: test/transports/platform/result-delivery.unit.test.ts.
  const config = resolveOptions({
    gpuSampling: false,
    timeoutGraceMs: 1_000,
    shutdownTimeoutMs: 10_000,
    coalesceStreamChunks: false,
    ...options.serve,
    logger,
  });
  const runtime = new WorkerRuntime(options.handler as Handler<unknown>, config, transport, logger);
  const exited = runtime.start();
  return { workerId: options.workerId, runtime, transport, metrics, exited, stop: () => runtime.stop() };
}
