/**
 * @module exports/harness
 * `serverless-worker/harness`: the local platform for tools built on the runtime (a
 * worker does not need it). The harness and its HTTP server, the environment a worker
 * process needs to reach it, a worker in the same process and the dry run, the job
 * request parser and the job lifecycle table, the job store contract and its in-memory store, the clocks, and the management API client.
 */
// First: a clear error when zod 4 is not what is installed.
import '../zod-version.js';
export { Harness, EndpointJobs, MemoryJobStore, type JobStore } from '../harness/index.js';
export { ManualClock, systemClock, type Clock } from '../clock/index.js';
export { createHarnessServer, type CreateHarnessServerOptions, type HarnessServer, type HarnessServerOptions } from '../../packages/platform/src/harness-server.js';
export { workerEnvFor } from '../../packages/platform/src/harness/worker-api/worker-env.js';
export { startLocalWorker } from '../local/local-worker.js';
export { runDryRun } from '../local/dry-run.js';
export { parseJobRequest, JobRequestSchema, JOB_STATUSES, TRANSITIONS } from '../job/index.js';
export { ManagementClient, managementClientFromEnv } from '../../packages/platform/src/harness/management/management-client.js';
