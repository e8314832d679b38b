/**
 * `serverless-worker harness --store postgres://…` as real child processes: one database
 * handle per process. With `--pg-pool-size 1` a harness that has used its job store, its
 * management store (/v1) and its launcher's slot claims (--image) holds exactly two
 * connections: its one pool's, and the LISTEN connection (before: a pool per store, four
 * connections or more, and three migration runs). Two harnesses started at the same
 * moment on a fresh database both come up (the migrations run once, under the advisory
 * lock) and share the queue.
 */
import postgres from 'postgres';
import { afterEach, describe, expect, it } from 'vitest';
import { HARNESS_SCHEMA } from '../../packages/platform/src/harness/harness-database.js';
import { schemaVersions } from '../../packages/platform/src/harness/postgres/migrate.js';
import { ChildList } from '../child-process.js';
import { startHarness } from '../reliability/support/harness-processes.js';
import { call, waitFor } from '../kit/index.js';
import { createTestDatabase, type TestDatabase } from './test-database.js';

const children = new ChildList();
let database: TestDatabase | undefined;
let admin: postgres.Sql | undefined;
afterEach(async () => {
  await children.killAll();
  await admin?.end();
  admin = undefined;
  await database?.drop();
  database = undefined;
});

/** The launcher on, with nothing to run: its slot claims are made on the database all the same. */
const LAUNCHER = ['--image', 'test/idle:1=node -e 0', '--gpus', 'none'];

/** The harness processes' connections to the test database (the admin's own left out), by application_name. */
async function connections(sql: postgres.Sql): Promise<string[]> {
  const rows = await sql<{ name: string }[]>`SELECT application_name AS name FROM pg_stat_activity
    WHERE datname = current_database() AND pid <> pg_backend_pid() ORDER BY 1`;
  return rows.map((row) => row.name);
}

/** Work for all three stores: a job (job store), a template and an endpoint (management, whose endpoint the launcher then looks at). */
async function useEveryStore(url: string, name: string): Promise<string> {
  const run = await call('POST', `${url}/v2/ep/run`, { body: { input: { n: 1 } } });
  expect(run.status).toBe(200);
  const template = (await call('POST', `${url}/v1/templates`, { body: { name, imageName: 'test/idle:1', isServerless: true, category: 'CPU' } })).json as {
    id: string;
  };
  expect((await call('POST', `${url}/v1/endpoints`, { body: { templateId: template.id, workersMax: 0 } })).status).toBe(200);
  return (run.json as { id: string }).id;
}

describe('serverless-worker harness --store postgres://: one database handle per process', () => {
  it('holds its pool (--pg-pool-size 1) and its LISTEN connection, nothing more, with the job store, /v1 and the launcher in use', async () => {
    database = await createTestDatabase();
    admin = postgres(database.url, { max: 1, onnotice: () => undefined });
    const harness = await startHarness(children, database.url, 0, ['--pg-pool-size', '1', ...LAUNCHER]);
    await useEveryStore(harness.url, 'one-pool');
    // A few launcher ticks on the slot claims (renew runs every tick).
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await connections(admin)).toEqual(['serverless-worker harness', 'serverless-worker harness']);
    const versions = await admin<{ version: number }[]>`SELECT version FROM sw_schema_version ORDER BY version`;
    expect(versions.map((row) => row.version)).toEqual((await schemaVersions(HARNESS_SCHEMA)).map((step) => step.version));
  }, 120_000);

  it('two harnesses started at the same moment on a fresh database both come up, migrate it once and share the queue', async () => {
    database = await createTestDatabase();
    admin = postgres(database.url, { max: 1, onnotice: () => undefined });
    const [a, b] = await Promise.all([0, 1].map(() => startHarness(children, (database as TestDatabase).url, 0, ['--pg-pool-size', '2', ...LAUNCHER])));
    if (!a || !b) throw new Error('two harnesses expected');
    const id = await useEveryStore(a.url, 'from-a');
    await useEveryStore(b.url, 'from-b');
    expect((await call('GET', `${b.url}/v2/ep/status/${id}`)).json).toMatchObject({ id, status: 'IN_QUEUE' });
    const known = (await schemaVersions(HARNESS_SCHEMA)).map((step) => step.version);
    const versions = await admin<{ version: number }[]>`SELECT version FROM sw_schema_version ORDER BY version`;
    expect(versions.map((row) => row.version)).toEqual(known);
    // Each process: at most its pool of 2 and its LISTEN connection.
    await waitFor(
      async () => ((await connections(admin as postgres.Sql)).length >= 4 ? true : undefined),
      'both LISTEN connections and a pool connection each',
      10_000,
    );
    const open = await connections(admin);
    expect(open.length).toBeLessThanOrEqual(6);
    expect(new Set(open)).toEqual(new Set(['serverless-worker harness']));
  }, 120_000);
});
