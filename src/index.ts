/**
 * @module serverless-worker
 * What a worker author imports: serve() and the handler contract, the load-balancing
 * worker, the start-up and stream helpers, the S3 upload helpers and the error
 * registry. Tools built on the runtime import `serverless-worker/harness` (the local
 * platform) and `serverless-worker/runtime` (transports, metrics, GPU, logger);
 * test/exports/public-api.test.ts keeps their names out of this index.
 */
// First: a clear error when zod 4 is not what is installed.
import './zod-version.js';
export { serve } from './serve.js';
export type { Handler, HandlerJob, JobContext } from './worker/handler.js';
export type { ServeOptions, ConcurrencyFunction, ConcurrencyState } from './worker/options.js';
export { withMetrics } from './worker/stream-metrics.js';
export { waitForUrl, type WaitForUrlOptions, type WaitForUrlResult } from './worker/wait-for-url.js';
export type { InitContext, InitFunction } from './worker/init/init-types.js';
export { serveLoadBalancing, startLoadBalancingWorker, type HttpApp, type LoadBalancingOptions, type LoadBalancingWorker } from './load-balancing/index.js';
export { splitYield, joinChunks } from './worker/stream-chunker.js';
export { lastAttemptChunks } from './worker/join-chunks.js';
export {
  ERROR_CODES,
  ServerlessWorkerError,
  isServerlessWorkerError,
  type ErrorCode,
  type Job,
  type JobRequest,
  type JobResult,
  type JobStatus,
  type JobView,
  type StreamChunk,
} from './job/index.js';
export { uploadFile, uploadBuffer, uploadStream, type S3UploadOptions, type S3UploadResult } from './s3/index.js';
export { RUNTIME_VERSION } from './version.js';
