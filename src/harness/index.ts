/**
 * @module harness
 * The in-process harness: the job store contract and its in-memory store, the scheduler
 * of its time rules and the per-endpoint facade. Its HTTP APIs and the PostgreSQL store
 * are the platform package's (packages/platform/src/harness/).
 * Layer: composition root (docs/architecture.md): its barrel of the core and the store, for the layers above the harness.
 */
export { ManualClock, systemClock, type Clock, type TimerHandle } from '../clock/index.js';
export * from './core/endpoint-jobs.js';
export * from './core/harness.js';
export * from './store/job-record.js';
export * from './core/scheduler.js';
export * from './store/job-store.js';
export { MemoryJobStore } from './store/memory-job-store.js';
