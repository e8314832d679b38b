/**
 * The migrations as .sql files carry on a database made by the TS-string migrations they
 * replaced (legacy-migrations.ts, word for word): nothing is run again, the recorded
 * versions stay as they were, the stores work on it, and its schema is the one a fresh
 * database gets from the .sql files. A database at version 2 gets version 3 only.
 */
import postgres from 'postgres';
import { afterEach, describe, expect, it } from 'vitest';
import { PostgresSlotClaims } from '../../../packages/platform/src/harness/launcher/postgres-slot-claims.js';
import { EndpointCreateInputSchema, TemplateCreateInputSchema } from '../../../packages/platform/src/harness/management/schemas/index.js';
import { PostgresManagementStore } from '../../../packages/platform/src/harness/management/store/postgres-management-store.js';
import { PostgresJobStore } from '../../../packages/platform/src/harness/store/postgres/postgres-job-store.js';
import { createTestDatabase, type TestDatabase } from '../../postgres/test-database.js';
import { T0, request } from '../store/job-store-conformance.js';
import { LEGACY_MIGRATIONS, legacyMigrate } from './legacy-migrations.js';

const databases: TestDatabase[] = [];
const admins: postgres.Sql[] = [];
afterEach(async () => {
  for (const sql of admins.splice(0)) await sql.end();
  for (const database of databases.splice(0)) await database.drop();
});

async function fresh(): Promise<{ database: TestDatabase; sql: postgres.Sql }> {
  const database = await createTestDatabase();
  databases.push(database);
  const sql = postgres(database.url, { max: 1, onnotice: () => undefined });
  admins.push(sql);
  return { database, sql };
}

/** What a schema is made of: columns, indexes, constraints, sequences (names and definitions). */
async function schemaOf(sql: postgres.Sql): Promise<unknown> {
  return {
    columns: await sql`SELECT table_name, column_name, data_type, is_nullable, column_default, is_identity
      FROM information_schema.columns WHERE table_schema = 'public' AND table_name <> 'sw_schema_version' ORDER BY 1, 2`,
    indexes: await sql`SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' AND tablename <> 'sw_schema_version' ORDER BY 1`,
    constraints: await sql`SELECT conname, pg_get_constraintdef(oid) AS definition FROM pg_constraint WHERE connamespace = 'public'::regnamespace ORDER BY 1`,
    sequences: await sql`SELECT sequence_name FROM information_schema.sequences WHERE sequence_schema = 'public' ORDER BY 1`,
  };
}

const versionsOf = (sql: postgres.Sql) =>
  sql<{ version: number; description: string; applied_at: Date }[]>`SELECT version, description, applied_at FROM sw_schema_version ORDER BY version`;

describe('a database migrated by the TS-string migrations, opened by the .sql ones', () => {
  it('runs only the versions after the legacy ones, keeps the recorded versions, and the three stores work on it', async () => {
    const { database, sql } = await fresh();
    expect(await legacyMigrate(sql)).toEqual([1, 2, 3]);
    const recorded = await versionsOf(sql);
    const handle = await database.connect();
    // Versions 4 and 5 (0004-vacuum-and-hot-updates.sql, 0005-cancelled-from.sql) came after the TS-string migrations.
    expect(handle.applied).toEqual([4, 5, 6, 7, 8]);
    expect((await versionsOf(sql)).slice(0, 3)).toEqual(recorded);
    const jobs = await PostgresJobStore.open(handle);
    const job = await jobs.submit('ep', request(), {}, T0);
    expect((await jobs.take('ep', 'w1', 1, T0)).map((taken) => taken.id)).toEqual([job.id]);
    const management = new PostgresManagementStore(handle);
    const template = await management.createTemplate(TemplateCreateInputSchema.parse({ name: 'kept', imageName: 'me/worker:1', isServerless: true }));
    expect((await management.createEndpoint(EndpointCreateInputSchema.parse({ templateId: template.id }))).templateId).toBe(template.id);
    const slots = new PostgresSlotClaims(handle, { machineId: 'box' });
    expect(await slots.claim('ep', 1, 'ep-0', T0)).toBe(0);
    await jobs.close();
  });

  it('has the schema a fresh database gets from the .sql files', async () => {
    const legacy = await fresh();
    await legacyMigrate(legacy.sql);
    // Then opened by the .sql files: the versions after the legacy ones.
    expect((await legacy.database.connect()).applied).toEqual([4, 5, 6, 7, 8]);
    const current = await fresh();
    expect((await current.database.connect()).applied).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(await schemaOf(current.sql)).toEqual(await schemaOf(legacy.sql));
  });

  it('takes a database at version 2 to the latest, running only the versions after 2', async () => {
    const { database, sql } = await fresh();
    await sql`CREATE TABLE sw_schema_version (version integer PRIMARY KEY, description text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`;
    for (const migration of LEGACY_MIGRATIONS.filter((m) => m.version <= 2)) {
      await sql.unsafe(migration.statements);
      await sql`INSERT INTO sw_schema_version (version, description) VALUES (${migration.version}, ${migration.description})`;
    }
    expect((await database.connect()).applied).toEqual([3, 4, 5, 6, 7, 8]);
    expect((await versionsOf(sql)).map((row) => row.version)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  });
});
