/**
 * @module harness/store/postgres/migrations
 * The job store's tables (endpoints, jobs, chunks, workers, counters): the numbered .sql files of this folder
 * (harness/postgres/migrate.ts runs them, once, in version order).
 */
import { readMigrationFolder, type MigrationFile } from '../../../postgres/migration-files.js';

export const readMigrationFiles = (): Promise<MigrationFile[]> => readMigrationFolder(new URL('./', import.meta.url));
