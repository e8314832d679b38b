/**
 * @module test/postgres/peer-databases
 * What the tests of stores that hear each other share (postgres-peers, postgres-statement-notices,
 * postgres-notice-window): a fresh test database for each test, a statement counter in front of it
 * where the test counts what reaches the server, and the handles and stores the test opens, closed
 * after it (the newest first), then the counter closed and the database dropped.
 *
 *     const databases = usePeerDatabases();
 *     const { database, counter } = await databases.counted();
 *     const a = await PostgresJobStore.open(await databases.handleOn(counter.url));
 *     databases.closeAfter(() => a.close());
 */
import { afterEach } from 'vitest';
import { openHarnessDatabase } from '../../packages/platform/src/harness/harness-database.js';
import type { PostgresDatabase } from '../../packages/platform/src/harness/postgres/database.js';
import { startStatementCounter, type StatementCounter } from './statement-counter.js';
import { createTestDatabase, type TestDatabase } from './test-database.js';

export interface PeerDatabases {
  /** A fresh database for this test. */
  database(): Promise<TestDatabase>;
  /** A fresh database with a statement counter in front of it: stores opened on `counter.url` are counted. */
  counted(): Promise<{ database: TestDatabase; counter: StatementCounter }>;
  /** A harness database handle (`poolSize` connections) on `url`, closed after the test. */
  handleOn(url: string): Promise<PostgresDatabase>;
  /** Run `close` after the test, before what was opened earlier is closed. */
  closeAfter(close: () => Promise<void>): void;
}

/** Registers the clean-up after each test of the calling file; `poolSize` is each handle's. */
export function usePeerDatabases(poolSize = 2): PeerDatabases {
  let database: TestDatabase | undefined;
  let counter: StatementCounter | undefined;
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
    await counter?.close();
    counter = undefined;
    await database?.drop();
    database = undefined;
  });
  const fresh = async (): Promise<TestDatabase> => (database = await createTestDatabase());
  return {
    database: fresh,
    counted: async () => {
      const made = await fresh();
      counter = await startStatementCounter(made.url);
      return { database: made, counter };
    },
    handleOn: async (url) => {
      const handle = await openHarnessDatabase(url, { poolSize });
      closers.push(() => handle.close());
      return handle;
    },
    closeAfter: (close) => void closers.push(close),
  };
}
