/**
 * @module harness/postgres
 * The process's one PostgreSQL handle (its pool, opened once, migrated once) and the
 * migration runner that reads each part's numbered .sql files.
 */
export { APPLICATION_NAME, DEFAULT_POOL_SIZE, PostgresDatabase, type PostgresDatabaseOptions } from './database.js';
export { MIGRATION_FILE_NAME, migrationVersion, readMigrationFolder, type MigrationFile, type SchemaPart } from './migration-files.js';
export { migrate, schemaVersions, type SchemaVersion } from './migrate.js';
