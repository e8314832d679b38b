/**
 * @module exports/harness
 * `serverless-worker/harness`: the in-process local harness for tools built on the
 * runtime (a worker does not need it): the harness core, the job store contract and its
 * in-memory store, a worker in the same process and the dry run, the job request parser
 * and the job lifecycle table, and the clocks. The HTTP server, the management API client
 * and the rest of the local platform are the serverless-worker-platform package's.
 */
// First: a clear error when zod 4 is not what is installed.
import '../zod-version.js';
export { Harness, EndpointJobs, MemoryJobStore, type JobStore } from '../harness/index.js';
export { ManualClock, systemClock, type Clock } from '../clock/index.js';
export { startLocalWorker } from '../local/local-worker.js';
export { runDryRun } from '../local/dry-run.js';
export { parseJobRequest, JobRequestSchema, JOB_STATUSES, TRANSITIONS } from '../job/index.js';
