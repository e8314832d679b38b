/**
 * @module harness
 * The local platform: the job store contract and its in-memory store, the scheduler
 * of its time rules, the per-endpoint facade, and (in http/) its HTTP APIs.
 */
export { ManualClock, systemClock, type Clock, type TimerHandle } from '../clock/index.js';
export * from './endpoint-jobs.js';
export * from './harness.js';
export * from './job-record.js';
export * from './scheduler.js';
export * from './store/job-store.js';
export { MemoryJobStore } from './store/memory-job-store.js';
export * from './launched-workers-view.js';
