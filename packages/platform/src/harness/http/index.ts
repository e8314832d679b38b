/**
 * @module harness/http
 * HTTP plumbing shared by the harness's features: JSON bodies, error replies, the API key, route config, rate limits.
 * Layer: harness plumbing (docs/architecture.md): uses the core, the store and the utilities, knows no feature.
 */
export * from './api-key.js';
export * from './bind-address.js';
export * from './error-reply.js';
export * from './json-body.js';
export * from './route-config.js';
export * from './rate-limit/index.js';
