/**
 * @module harness/worker-api
 * The worker API (job-take, job-take-batch, job-done, job-stream, job-stop, ping)
 * under /v2/{endpoint_id}, worker liveness from the heartbeat, and the variables a
 * worker process needs to join the harness.
 * Layer: harness feature (docs/architecture.md): owns its routes; uses http/, the core, the store.
 */
export { workerApiRoutes } from './worker-api-routes.js';
export { resolveWorkerApiSettings, type WorkerApiEvents, type WorkerApiOptions, type WorkerApiSettings, type LivenessSettings } from './options.js';
export { workerEnvFor, formatWorkerEnv, type WorkerEnv, type WorkerEnvOptions } from './worker-env.js';
export { workerErrorPayload } from './bodies.js';
export { WorkerLiveness, type GoneWorker } from './worker-liveness.js';
export { WorkerApiDirect, type WorkerApiCalls, type DirectAnswer } from './direct-calls.js';
