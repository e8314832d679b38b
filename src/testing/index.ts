/**
 * @module testing
 * `serverless-worker/testing`: run a handler on a job in a unit test (vitest,
 * node:test, any runner) through the real worker runtime and an in-process harness.
 * Layer: tools, above both sides (docs/architecture.md).
 */
// First: a clear error when zod 4 is not what is installed.
import '../zod-version.js';
export {
  runJob,
  streamJob,
  type OutputOf,
  type RequestFor,
  type RequestInputOf,
  type RunJobSettings,
  type RunJobSettingsOf,
  type TestJobRequest,
  type TestJobResult,
  type TestJobStream,
  type YieldOf,
} from './run-job.js';
export { jobError, type JobErrorInfo } from './job-error.js';
export { ManualClock, type Clock } from '../clock/index.js';
export { joinChunks } from '../worker/join-chunks.js';
