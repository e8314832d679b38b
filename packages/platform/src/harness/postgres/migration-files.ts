/**
 * @module harness/postgres/migration-files
 * A part's migrations (the job store's, the management store's, the launcher's) are the
 * numbered `.sql` files of its `migrations/` folder, `NNNN-what-it-does.sql`: the number
 * is the schema version the file belongs to. Each folder's `index.ts` reads its own files
 * with readMigrationFolder; in a bundle made by `serverless-worker build` that module is
 * replaced by one holding the files' text (build/sql-migrations-plugin.ts), since the
 * bundle has no folders of this package beside it.
 */
import { readFile, readdir } from 'node:fs/promises';

/** One migration file: its name (`0002-management-records.sql`) and its statements. */
export interface MigrationFile {
  readonly name: string;
  readonly sql: string;
}

/** A part of the schema: its migration files, read when the database is opened. */
export type SchemaPart = () => Promise<readonly MigrationFile[]>;

/** `NNNN-lowercase-words.sql`. */
export const MIGRATION_FILE_NAME = /^(\d{4})-[a-z0-9-]+\.sql$/;

/** The schema version a migration file belongs to (its number); throws on a name not of the form. */
export function migrationVersion(name: string): number {
  const match = MIGRATION_FILE_NAME.exec(name);
  if (!match?.[1]) throw new Error(`Migration file ${name} is not named NNNN-what-it-does.sql`);
  return Number(match[1]);
}

/** The `.sql` files of `folder` (a file: URL ending in `/`), in name order. */
export async function readMigrationFolder(folder: URL): Promise<MigrationFile[]> {
  const names = (await readdir(folder)).filter((name) => name.endsWith('.sql')).sort();
  return Promise.all(names.map(async (name) => ({ name, sql: await readFile(new URL(name, folder), 'utf8') })));
}
