/**
 * @module harness/launcher
 * The harness runs and scales endpoint workers itself: a Launcher (local processes per
 * template image), the pure scaling decision, GPU assignment, crash backoff, logs.
 * Layer: harness feature (docs/architecture.md): uses management/ (templates) and worker-api/ (the worker's environment).
 */
export * from './crash-backoff.js';
export * from './gpu-pool.js';
export * from './launched-worker.js';
export * from './launcher-options.js';
export * from './launcher.js';
export * from './scale-decision.js';
export * from './worker-logs.js';
export * from './queue-snapshot.js';
export * from './launch-env.js';
export * from './endpoint-runtime.js';
export * from './scale-events.js';
export * from './slot-claims.js';
export * from './launcher-slots.js';
export * from './launch-backend.js';
export * from './process-backend.js';
export * from './process-records.js';
