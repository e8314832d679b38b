/**
 * @module serverless-worker-platform
 * The local platform beside the serverless-worker SDK, for tools that start it from code:
 * the harness's HTTP server (queue, worker and management APIs, dashboard, OpenAPI), the
 * environment a worker process needs to reach it, and the management API client. The
 * in-process harness (Harness, MemoryJobStore, the dry run) is the SDK's
 * `serverless-worker/harness`.
 */
// First: a clear error when zod 4 is not what is installed.
import 'serverless-worker/internal';
export { createHarnessServer, type CreateHarnessServerOptions, type HarnessServer, type HarnessServerOptions } from './harness-server.js';
export { workerEnvFor, formatWorkerEnv, type WorkerEnv, type WorkerEnvOptions } from './harness/worker-api/worker-env.js';
export { ManagementClient, managementClientFromEnv } from './harness/management/management-client.js';
// The management API's routes, for ManagementClient.call(route, params, body).
export { ENDPOINT_ROUTES, NETWORK_VOLUME_ROUTES, POD_ROUTES, TEMPLATE_ROUTES } from './harness/management/management-routes.js';
export { PLATFORM_VERSION } from './platform-version.js';
// The platform's error codes, registered before any error is raised or answered.
import './job/platform-error-codes.js';
export { PLATFORM_ERROR_CODES, type PlatformErrorCode } from './job/platform-error-codes.js';
