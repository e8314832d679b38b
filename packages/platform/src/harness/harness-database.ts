/**
 * @module harness/harness-database
 * The harness's schema (the job store's, the management store's and the launcher's
 * tables, each part its own migration files) and the handle every store of a harness
 * process shares: opened once by whoever opens the stores (the CLI, createHarnessServer's
 * `store` option), closed by it after them.
 */
import { readMigrationFiles as launcherMigrations } from './launcher/migrations/index.js';
import { readMigrationFiles as managementMigrations } from './management/store/migrations/index.js';
import { PostgresDatabase, type PostgresDatabaseOptions, type SchemaPart } from './postgres/index.js';
import { readMigrationFiles as jobStoreMigrations } from './store/postgres/migrations/index.js';

/** Every part's tables, in the order a version's files are applied. */
export const HARNESS_SCHEMA: readonly SchemaPart[] = [jobStoreMigrations, managementMigrations, launcherMigrations];

/** Open the process's handle on `url`, its schema created or migrated. */
export function openHarnessDatabase(url: string, options: Omit<PostgresDatabaseOptions, 'schema'> = {}): Promise<PostgresDatabase> {
  return PostgresDatabase.open(url, { ...options, schema: HARNESS_SCHEMA });
}
