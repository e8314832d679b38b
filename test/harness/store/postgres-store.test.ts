/**
 * The job store conformance suite on the PostgreSQL store: each test on a fresh database
 * of the run's embedded PostgreSQL server, with peers (other store instances on the same
 * database, as other harness processes) for the exactly-once checks.
 */
import { PostgresJobStore } from '../../../src/harness/store/postgres/postgres-job-store.js';
import type { JobStore } from '../../../src/harness/store/job-store.js';
import { createTestDatabase } from '../../postgres/test-database.js';
import { describeJobStore } from './job-store-conformance.js';

describeJobStore('postgres', async () => {
  const database = await createTestDatabase();
  const stores: JobStore[] = [await PostgresJobStore.open(database.url, { maxConnections: 4 })];
  return {
    store: stores[0] as JobStore,
    openPeer: async () => {
      const peer = await PostgresJobStore.open(database.url, { maxConnections: 4 });
      stores.push(peer);
      return peer;
    },
    close: async () => {
      for (const store of stores) await store.close();
      await database.drop();
    },
  };
});
