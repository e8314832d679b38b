/**
 * @module harness/server-store
 * The `store` option of createHarnessServer: instead of a Harness, a job store spec
 * (`memory` or `postgres://…`; absent: `SW_HARNESS_STORE`, else memory). The composition
 * root (../compose.ts) then opens the store, makes a Harness on it (with `harnessOptions`),
 * and the server closes both when it closes. On PostgreSQL
 * the management API's records (/v1) live in the same database, unless the options name
 * a management store of their own; both stores share one database handle (one pool of
 * `storePoolSize` connections), which the server closes after them.
 */
import { Harness, type HarnessOptions, ServerlessWorkerError } from 'serverless-worker/internal';
import { STORE_ENV, openJobStore } from './open-store.js';
import type { ManagementStore } from './management/index.js';
import type { PostgresDatabase } from './postgres/database.js';
import type { HarnessServerOptions } from './server-options.js';

/** createHarnessServer's options: a `harness`, or a `store` for a harness the server makes and owns. */
export type CreateHarnessServerOptions = Omit<HarnessServerOptions, 'harness'> &
  (
    | { harness: Harness; store?: undefined; storePoolSize?: undefined }
    | {
        harness?: undefined;
        /** `memory` or a PostgreSQL connection string (postgres://user:password@host:5432/database); default `SW_HARNESS_STORE`, else memory. */
        store?: string | undefined;
        /** Connections in the PostgreSQL pool of a `store` the server opens (LISTEN takes one more); default 10. */
        storePoolSize?: number | undefined;
      }
  );

/** The options with a harness in them, and the harness, management store and database handle the server made (it closes them, in that order). */
export async function harnessForServer(
  options: CreateHarnessServerOptions,
  harnessOptions: Omit<HarnessOptions, 'store'> = {},
): Promise<{ options: HarnessServerOptions; owned: Harness | undefined; ownedManagement?: ManagementStore; ownedDatabase?: PostgresDatabase; spec?: string }> {
  const { store, storePoolSize, harness, ...rest } = options;
  if (harness !== undefined) {
    if (store !== undefined) {
      throw new ServerlessWorkerError(
        'SW_INVALID_OPTIONS',
        'Invalid harness server options: give either harness or store, not both (a Harness takes its store as new Harness({ store }))',
      );
    }
    return { options: { ...rest, harness }, owned: undefined };
  }
  const spec = store ?? process.env[STORE_ENV] ?? 'memory';
  const logger = rest.logger;
  const { store: jobStore, database } = await openJobStore(spec, {
    ...(storePoolSize !== undefined ? { poolSize: storePoolSize } : {}),
    // The system clock is measured against the database's; a harness on a clock of its own (tests) is not.
    ...(harnessOptions.clock !== undefined ? { clock: null } : {}),
    ...(logger ? { onError: (error: unknown) => logger.warn({ err: error }, 'job store: background error (it goes on)') } : {}),
    ...(logger ? { onWarning: (message: string) => logger.warn(message) } : {}),
  });
  const owned = new Harness({ ...harnessOptions, store: jobStore });
  if (!database) return { options: { ...rest, harness: owned }, owned, spec };
  if (rest.management === false || rest.management?.store !== undefined) return { options: { ...rest, harness: owned }, owned, ownedDatabase: database, spec };
  const { PostgresManagementStore } = await import('./management/store/postgres-management-store.js');
  const ownedManagement = new PostgresManagementStore(database, { now: () => owned.clock.now() });
  return {
    options: { ...rest, harness: owned, management: { ...rest.management, store: ownedManagement } },
    owned,
    ownedManagement,
    ownedDatabase: database,
    spec,
  };
}
