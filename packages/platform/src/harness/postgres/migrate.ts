/**
 * @module harness/postgres/migrate
 * Create or migrate the harness's tables, once per process, when its database handle
 * opens (database.ts). Each part owns its tables as numbered `.sql` files
 * (migration-files.ts); the number is a schema version shared by all parts (version 2 is
 * the management store's records and the launcher's slots, made in one step before the
 * files were split). Versions are applied in order, each once, in one transaction under
 * a transaction-scoped advisory lock, so processes starting at once wait for each other
 * instead of racing; `sw_schema_version` records each version applied (the table and
 * the lock key are those of the earlier TS-string migrations, so a database they made
 * carries on from where it is).
 *
 * Times are epoch milliseconds from the harness's clock (bigint), never the database's:
 * the stores never read a clock (store/job-store.ts).
 */
import type postgres from 'postgres';
import { transaction } from './transaction.js';
import { migrationVersion, type MigrationFile, type SchemaPart } from './migration-files.js';

/** Key of the advisory lock that serialises migrations ('sw-schema' as a number). */
const MIGRATION_LOCK = 0x73772d736368;

/** One schema version: the files of every part numbered with it, in the order of the parts. */
export interface SchemaVersion {
  readonly version: number;
  readonly files: readonly MigrationFile[];
}

/** The versions the parts' files make up, in version order. */
export async function schemaVersions(parts: readonly SchemaPart[]): Promise<SchemaVersion[]> {
  const byVersion = new Map<number, MigrationFile[]>();
  for (const [index, files] of (await Promise.all(parts.map((part) => part()))).entries()) {
    // A folder without its .sql files (a build that did not copy them) must not pass for an empty schema.
    if (files.length === 0)
      throw new Error(`Part ${index + 1} of the harness schema has no migration files: this copy of serverless-worker lacks its .sql files`);
    for (const file of files) {
      const version = migrationVersion(file.name);
      byVersion.set(version, [...(byVersion.get(version) ?? []), file]);
    }
  }
  return [...byVersion.entries()].sort(([a], [b]) => a - b).map(([version, files]) => ({ version, files }));
}

/**
 * Bring the database to the newest of `versions`; answers the versions applied by this
 * call (none when another process did them). Refuses a database migrated by a newer harness.
 */
export async function migrate(sql: postgres.Sql, versions: readonly SchemaVersion[]): Promise<number[]> {
  const known = Math.max(0, ...versions.map((step) => step.version));
  return transaction(sql, async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`;
    await tx`CREATE TABLE IF NOT EXISTS sw_schema_version (version integer PRIMARY KEY, description text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`;
    const rows = await tx<{ version: number }[]>`SELECT version FROM sw_schema_version`;
    const done = new Set(rows.map((row) => row.version));
    const newest = Math.max(0, ...done);
    if (newest > known) {
      throw new Error(
        `The database's harness schema is at version ${newest}, newer than this harness knows (${known}): ` +
          'upgrade serverless-worker-platform (the package that runs the harness) on this machine, or point --store at another database',
      );
    }
    const applied: number[] = [];
    for (const step of versions) {
      if (done.has(step.version)) continue;
      for (const file of step.files) await tx.unsafe(file.sql);
      await tx`INSERT INTO sw_schema_version (version, description) VALUES (${step.version}, ${step.files.map((file) => file.name).join(', ')})`;
      applied.push(step.version);
    }
    return applied;
  });
}
