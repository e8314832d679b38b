/**
 * A bundle made by `serverless-worker build` can open the PostgreSQL store (a worker
 * file that starts createHarnessServer({ store: 'postgres://…' }) bundles the harness):
 * the migrations' .sql files are inside it as text (build/sql-migrations-plugin.ts), so
 * the bundle, run from a folder with nothing of this package beside it, creates the
 * schema on a fresh database. One-file and split bundles both.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleWorker } from '../../packages/platform/src/build/bundle.js';
import { REPO_ROOT, jsonLines } from '../child-process.js';
import { createTestDatabase } from '../postgres/test-database.js';
import { HARNESS_SCHEMA } from '../../packages/platform/src/harness/harness-database.js';
import { schemaVersions } from '../../packages/platform/src/harness/postgres/migrate.js';

let out: string;
beforeAll(async () => {
  out = await mkdtemp(join(tmpdir(), 'sw-bundle-sql-'));
});
afterAll(async () => {
  await rm(out, { recursive: true, force: true });
});

describe.each([false, true])('a bundle (splitting: %s) that opens the PostgreSQL store', { timeout: 120_000 }, (splitting) => {
  it('creates the schema from the migrations inside it and serves a job', async () => {
    const outdir = join(out, splitting ? 'split' : 'one');
    const { bundle } = await bundleWorker({ entry: join(REPO_ROOT, 'test/fixtures/build/postgres-harness.ts'), outdir, sourcemap: false, splitting });
    expect((await readdir(outdir)).filter((name) => name.endsWith('.sql'))).toEqual([]);
    const database = await createTestDatabase();
    const sql = postgres(database.url, { max: 1, onnotice: () => undefined });
    try {
      const run = await execa(process.execPath, [bundle], {
        cwd: outdir,
        env: { SW_HARNESS_STORE: database.url, LOG_LEVEL: 'warn' },
        reject: false,
        all: true,
        timeout: 60_000,
      });
      expect(run.exitCode, run.all).toBe(0);
      expect(jsonLines(run.stdout).at(-1)).toEqual({ store: 'postgres', status: 200 });
      const versions = await sql<{ version: number }[]>`SELECT version FROM sw_schema_version ORDER BY version`;
      // Every version the repository's migrations name (the sources' .sql files), applied from the shipped copies.
      expect(versions.map((row) => row.version)).toEqual((await schemaVersions(HARNESS_SCHEMA)).map((step) => step.version));
      const tables = await sql<{ name: string }[]>`SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' ORDER BY 1`;
      expect(tables.map((row) => row.name)).toEqual(expect.arrayContaining(['sw_jobs', 'sw_mgmt_templates', 'sw_launcher_slots']));
      expect((await sql`SELECT id FROM sw_jobs`).length).toBe(1);
    } finally {
      await sql.end();
      await database.drop();
    }
  });
});
