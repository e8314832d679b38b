/**
 * @module serverless-worker
 * The public surface: serve(), the handler contract, stream helpers, the harness,
 * transports, and the error registry.
 */
// First: a clear error when zod 4 is not what is installed.
import './zod-version.js';
export { serve } from './serve.js';
export type { Handler, HandlerJob, JobContext } from './worker/handler.js';
export type { ServeOptions, ConcurrencyFunction, ConcurrencyState, WorkerConfig } from './worker/options.js';
export { resolveOptions } from './worker/options.js';
export { withMetrics } from './worker/stream-metrics.js';
export { waitForUrl, type WaitForUrlOptions, type WaitForUrlResult } from './worker/wait-for-url.js';
export type { InitContext, InitFunction } from './worker/init/init-types.js';
export {
  serveLoadBalancing,
  startLoadBalancingWorker,
  type HttpApp,
  type LoadBalancingOptions,
  type LoadBalancingWorker,
} from './load-balancing/index.js';
export { splitYield, joinChunks } from './worker/stream-chunker.js';
export { lastAttemptChunks } from './worker/join-chunks.js';
export { WorkerRuntime, type WorkerExit } from './worker/worker-runtime.js';
export { LIFECYCLE_STATES, LIFECYCLE_MOVES, type LifecycleState } from './worker/lifecycle-state.js';
export { Harness, ManualClock, systemClock, EndpointJobs, MemoryJobStore, type Clock, type JobStore } from './harness/index.js';
export { InProcessTransport, type Transport, type StopReason } from './transports/index.js';
export { PlatformTransport, createPlatformTransport, parsePlatformEnv } from './transports/platform/index.js';
export { createHarnessServer, type CreateHarnessServerOptions, type HarnessServer, type HarnessServerOptions } from './harness-server.js';
export { workerEnvFor } from './harness/http/worker-api/worker-env.js';
export { ManagementClient, managementClientFromEnv } from './cli/management-client.js';
export { createMetrics, type Metrics } from './metrics/index.js';
export { readGpus, createGpuSampler, checkGpuPresence } from './gpu/index.js';
export { startLocalWorker } from './local/local-worker.js';
export { runDryRun } from './local/dry-run.js';
export {
  ERROR_CODES,
  ServerlessWorkerError,
  isServerlessWorkerError,
  parseJobRequest,
  JobRequestSchema,
  JOB_STATUSES,
  TRANSITIONS,
  type ErrorCode,
  type Job,
  type JobRequest,
  type JobResult,
  type JobStatus,
  type JobView,
  type StreamChunk,
} from './job/index.js';
export { createLogger } from './log/index.js';
export { uploadFile, uploadBuffer, uploadStream, type S3UploadOptions, type S3UploadResult } from './s3/index.js';
export { RUNTIME_VERSION } from './version.js';
