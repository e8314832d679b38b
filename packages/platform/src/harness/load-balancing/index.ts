/**
 * @module harness/load-balancing
 * Load-balancing endpoints of the harness: worker registration, /ping health checks,
 * round-robin proxying under /lb/{endpoint_id}/.
 * Layer: harness feature (docs/architecture.md): owns the /lb routes; uses the core.
 */
export * from './lb-pool.js';
export * from './lb-proxy.js';
export * from './lb-routes.js';
export * from './load-balancing.js';
export * from './options.js';
