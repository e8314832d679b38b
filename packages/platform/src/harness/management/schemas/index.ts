/**
 * @module harness/management/schemas
 * zod schemas of the management API: inputs (validated at the HTTP boundary and by
 * the CLI) and records (what the harness answers, what the client parses).
 */
export * from './endpoint.js';
export * from './fields.js';
export * from './network-volume.js';
export * from './pod.js';
export * from './template.js';
