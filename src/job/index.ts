/**
 * @module job
 * The job model: request schemas, states and transitions, shapes and errors.
 * Imports nothing else of this package.
 * Layer: utility (docs/architecture.md): every layer may use it; it uses nothing of the package but version.ts.
 */
export * from './error-codes.js';
export * from './errors.js';
export * from './job.js';
export * from './limits.js';
export * from './parse.js';
export * from './request-schema.js';
export * from './states.js';
export * from './json-shape.js';
export * from './raw-json.js';
