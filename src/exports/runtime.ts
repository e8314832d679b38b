/**
 * @module exports/runtime
 * `serverless-worker/runtime`: the parts serve() is made of, for tools built on the
 * runtime (a worker does not need them): the worker runtime and its lifecycle, the
 * option resolver, the transports (in-process and the platform's), metrics, GPU
 * readings and the logger.
 */
// First: a clear error when zod 4 is not what is installed.
import '../zod-version.js';
export { WorkerRuntime, type WorkerExit } from '../worker/worker-runtime.js';
export { LIFECYCLE_STATES, LIFECYCLE_MOVES, type LifecycleState } from '../worker/lifecycle-state.js';
export { resolveOptions, type WorkerConfig } from '../worker/options.js';
export { InProcessTransport, type Transport, type StopReason } from '../transports/index.js';
export { PlatformTransport, createPlatformTransport, parsePlatformEnv } from '../transports/platform/index.js';
export { createMetrics, loadMetrics, type Metrics } from '../metrics/index.js';
export { readGpus, createGpuSampler, checkGpuPresence } from '../gpu/index.js';
export { createLogger, loadPrettyLogs } from '../log/index.js';
