/**
 * @module harness/core
 * The harness engine over the store contract: the Harness, each endpoint's EndpointJobs, the scheduler.
 * Layer: harness core (docs/architecture.md): uses the store and the utilities, knows no feature.
 */
export * from './harness.js';
export * from './endpoint-jobs.js';
export * from './scheduler.js';
