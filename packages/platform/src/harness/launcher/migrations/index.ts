/**
 * @module harness/launcher/migrations
 * The launcher's table (the worker slots shared by every machine on the database): the numbered .sql files of this folder
 * (harness/postgres/migrate.ts runs them, once, in version order).
 */
import { readMigrationFolder, type MigrationFile } from '../../postgres/migration-files.js';

export const readMigrationFiles = (): Promise<MigrationFile[]> => readMigrationFolder(new URL('./', import.meta.url));
