/**
 * @module worker
 * The worker runtime: handler contract, options, job runs, the dispatch loop, stream chunking.
 * Layer: worker side, over transports/ (docs/architecture.md); never imports the harness.
 */
export * from './argv.js';
export * from './error-payload.js';
export * from './handler.js';
export * from './job-log.js';
export * from './job-output.js';
export * from './job-run.js';
export * from './job-telemetry.js';
export * from './lifecycle-state.js';
export * from './options.js';
export * from './platform-extras.js';
export * from './signals.js';
export * from './stream-chunker.js';
export * from './stream-metrics.js';
export * from '../job/test-input.js';
export * from './worker-runtime.js';
export * from './init/index.js';
export * from './wait-for-url.js';
export * from './closest-name.js';
export * from './input-check.js';
export * from './startup-error.js';
export * from './runtime-env.js';
export * from './node-version.js';
export * from './stray-errors.js';
