/**
 * @module harness/management/store
 * The management store contract and its in-memory implementation.
 */
export * from './endpoint-rules.js';
export * from './in-memory-store.js';
export * from './management-store.js';
export * from './records.js';
