/**
 * @module harness/management/store/migrations
 * The management store's tables (the /v1 templates, network volumes and endpoints): the numbered .sql files of this folder
 * (harness/postgres/migrate.ts runs them, once, in version order).
 */
import { readMigrationFolder, type MigrationFile } from '../../../postgres/migration-files.js';

export const readMigrationFiles = (): Promise<MigrationFile[]> => readMigrationFolder(new URL('./', import.meta.url));
