/** The management store conformance suite on the in-memory store (one process: no peers). */
import { InMemoryManagementStore } from '../../../packages/platform/src/harness/management/index.js';
import { describeManagementStore } from './management-store-conformance.js';

describeManagementStore('memory', async () => {
  const store = new InMemoryManagementStore();
  return { store, close: () => store.close() };
});
