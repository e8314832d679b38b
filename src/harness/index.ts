/**
 * @module harness
 * The local platform: job store with lifecycle timers, and (in http/) its HTTP APIs.
 */
export * from './clock.js';
export * from './endpoint-jobs.js';
export * from './harness.js';
export * from './job-record.js';
export * from './worker-presence.js';
export * from './launched-workers-view.js';
