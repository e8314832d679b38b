/**
 * @module load-balancing
 * Load-balancing workers: the author's HTTP app with /ping from the lifecycle.
 * Layer: worker side, over worker/ and transports/ (docs/architecture.md).
 */
export * from './app-adapter.js';
export * from './lb-options.js';
export * from './load-balancing-worker.js';
export * from './ping.js';
