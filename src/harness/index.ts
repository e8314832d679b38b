/**
 * @module harness
 * The local platform: the job store contract and its in-memory store, the scheduler
 * of its time rules, the per-endpoint facade, and (in http/) its HTTP APIs.
 * Layer: composition root (docs/architecture.md): its barrel of the core and the store, for the layers above the harness.
 */
export { ManualClock, systemClock, type Clock, type TimerHandle } from '../clock/index.js';
export * from './core/endpoint-jobs.js';
export * from './core/harness.js';
export * from './store/job-record.js';
export * from './core/scheduler.js';
export * from './store/job-store.js';
export { MemoryJobStore } from './store/memory-job-store.js';
export * from '../../packages/platform/src/harness/launcher/launched-workers-view.js';
