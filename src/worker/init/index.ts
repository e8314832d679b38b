/**
 * @module worker/init
 * The start-up phase: `serve(handler, { init })`, run once before the first job.
 */
export * from './bind-state.js';
export * from './init-phase.js';
export * from './init-types.js';
export * from './run-init.js';
