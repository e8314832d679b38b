/**
 * @module harness/load-balancing
 * Load-balancing endpoints of the harness: worker registration, /ping health checks,
 * round-robin proxying under /lb/{endpoint_id}/.
 */
export * from './lb-pool.js';
export * from './lb-proxy.js';
export * from './lb-routes.js';
export * from './load-balancing.js';
export * from './options.js';
