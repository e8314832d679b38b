/** The job store conformance suite on the in-memory store (one process: no peers). */
import { MemoryJobStore } from '../../../src/harness/store/memory-job-store.js';
import { describeJobStore } from './job-store-conformance.js';
import type {} from '../../kit/index.js';

describeJobStore('memory', async () => {
  const store = new MemoryJobStore();
  return { store, close: () => store.close() };
});
