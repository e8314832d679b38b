/**
 * @module harness/management
 * The management API of the harness (spec 2.1 to 2.4, 2.6, 4.1): schemas, the store,
 * the fastify plugin, and the hooks that connect it to the job harness and the worker
 * registry.
 * Layer: harness feature (docs/architecture.md): owns the /v1 routes, its store and the ManagementClient.
 */
export * from './hooks.js';
export * from './management-api.js';
export * from './parse-input.js';
export * from './schemas/index.js';
export * from './store/index.js';
