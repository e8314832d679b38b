/**
 * @module harness/management/store
 * The management store contract, its record rules and its in-memory implementation.
 * The PostgreSQL one (postgres-management-store.ts) is imported by path, so a harness on
 * the in-memory store never loads the driver.
 */
export * from './endpoint-rules.js';
export * from './in-memory-store.js';
export * from './management-store.js';
export * from './records.js';
