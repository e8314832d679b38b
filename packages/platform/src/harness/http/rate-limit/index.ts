/**
 * @module harness/http/rate-limit
 * Spec 8.2 rate limits: the table, the limiter, and the fastify hook.
 */
export * from './limits.js';
export * from './rate-limit-hook.js';
export * from './rate-limiter.js';
