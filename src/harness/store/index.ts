/**
 * @module harness/store
 * The job store contract, the job records and rules both stores apply, and the in-memory store (PostgreSQL's in postgres/, loaded on demand by open-store.ts).
 * Layer: harness store (docs/architecture.md): the bottom of the harness, uses only the utilities.
 */
export * from './job-store.js';
export * from './job-record.js';
export { MemoryJobStore } from './memory-job-store.js';
