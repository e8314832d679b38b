/**
 * The job store conformance suite on the PostgreSQL store: each test on a fresh database
 * of the run's embedded PostgreSQL server, with peers (other store instances on the same
 * database, as other harness processes) for the exactly-once checks.
 */
import postgres from 'postgres';
import { afterEach, describe, expect, it } from 'vitest';
import { Harness } from '../../../src/harness/index.js';
import { createHarnessServer } from '../../../packages/platform/src/harness/server-api.js';
import { call, eventually } from '../../kit/index.js';
import { PostgresJobStore } from '../../../packages/platform/src/harness/store/postgres/postgres-job-store.js';
import { LEGACY_MIGRATIONS } from '../postgres/legacy-migrations.js';
import type { JobStore, StoreEvent } from '../../../src/harness/store/job-store.js';
import { createTestDatabase, type TestDatabase } from '../../postgres/test-database.js';
import { HARNESS_SCHEMA } from '../../../packages/platform/src/harness/harness-database.js';
import { schemaVersions } from '../../../packages/platform/src/harness/postgres/migrate.js';
import { sleep } from '../../../src/clock/index.js';
import { T0, describeJobStore, request } from './job-store-conformance.js';

describeJobStore('postgres', async () => {
  const database = await createTestDatabase();
  const stores: JobStore[] = [await PostgresJobStore.open(await database.connect(4))];
  return {
    store: stores[0] as JobStore,
    openPeer: async () => {
      const peer = await PostgresJobStore.open(await database.connect(4));
      stores.push(peer);
      return peer;
    },
    close: async () => {
      for (const store of stores) await store.close();
      await database.drop();
    },
  };
});

describe('PostgresJobStore: schema, durability, notifications', () => {
  let database: TestDatabase | undefined;
  const stores: JobStore[] = [];
  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close();
    await database?.drop();
    database = undefined;
  });

  it('migrates once when several harnesses start at the same time, and refuses a newer schema', async () => {
    database = await createTestDatabase();
    const url = database.url;
    const handles = await Promise.all([1, 2, 3].map(() => (database as TestDatabase).connect(2)));
    stores.push(...(await Promise.all(handles.map((handle) => PostgresJobStore.open(handle)))));
    const known = (await schemaVersions(HARNESS_SCHEMA)).map((step) => step.version);
    // Each version applied by exactly one of the three.
    expect(handles.flatMap((handle) => handle.applied).sort((a, b) => a - b)).toEqual(known);
    const sql = postgres(url, { max: 1, onnotice: () => undefined });
    try {
      const versions = await sql<{ version: number }[]>`SELECT version FROM sw_schema_version`;
      expect(versions.map((row) => row.version).sort((a, b) => a - b)).toEqual(known);
      await sql`INSERT INTO sw_schema_version (version, description) VALUES (${Math.max(...known) + 1}, 'from the future')`;
      await expect(database.connect()).rejects.toThrow(/newer than this harness knows \(\d+\): upgrade serverless-worker-platform /);
    } finally {
      await sql.end();
    }
  });

  it('keeps jobs, results and chunks when the store is closed and opened again', async () => {
    database = await createTestDatabase();
    const before: JobStore = await PostgresJobStore.open(await database.connect());
    const queued = await before.submit('ep', request(), {}, T0);
    const running = await before.submit('ep', request(), {}, T0);
    const done = await before.submit('ep', request(), {}, T0);
    await before.take('ep', 'w1', 1, T0);
    await before.take('ep', 'w2', 1, T0);
    await before.pushChunk('ep', queued.id, 'w1', { output: 'kept' }, 1, T0);
    await before.complete('ep', running.id, 'w2', { kind: 'output', output: { ok: 1 } }, 1, T0);
    await before.close();
    const after: JobStore = await PostgresJobStore.open(await database.connect());
    stores.push(after);
    expect((await after.readStream('ep', queued.id)).stream).toEqual([{ output: 'kept', metrics: { attempt: 1 } }]);
    expect((await after.complete('ep', queued.id, 'w1', { kind: 'output', output: 2 }, 1, T0)).ack).toEqual({ applied: true, status: 'COMPLETED' });
    expect(await after.get('ep', running.id)).toMatchObject({ status: 'COMPLETED', output: { ok: 1 } });
    expect((await after.take('ep', 'w3', 5, T0)).map((job) => job.id)).toEqual([done.id]);
  });

  it('migrates a version 2 database with jobs in it to json columns: requests, outputs and policy timeouts kept', async () => {
    database = await createTestDatabase();
    const sql = postgres(database.url, { max: 1, onnotice: () => undefined });
    try {
      // The schema as an older harness left it (migrations 1 and 2), with a queued job and a finished one.
      await sql`CREATE TABLE sw_schema_version (version integer PRIMARY KEY, description text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`;
      for (const migration of LEGACY_MIGRATIONS.filter((m) => m.version <= 2)) {
        await sql.unsafe(migration.statements);
        await sql`INSERT INTO sw_schema_version (version, description) VALUES (${migration.version}, ${migration.description})`;
      }
      await sql`INSERT INTO sw_endpoints (id) VALUES ('ep')`;
      await sql`INSERT INTO sw_jobs (endpoint_id, id, request, sync, status, submitted_at, queued_at, expires_at, retention_ms)
        VALUES ('ep', 'old-queued', ${sql.json({ input: { n: 1 }, policy: { executionTimeout: 7_000 } })}, false, 'IN_QUEUE', ${T0}, ${T0}, ${T0 + 60_000}, 1800000)`;
      await sql`INSERT INTO sw_jobs (endpoint_id, id, request, sync, status, submitted_at, queued_at, expires_at, retention_ms, output)
        VALUES ('ep', 'old-done', ${sql.json({ input: {} })}, false, 'COMPLETED', ${T0}, ${T0}, ${T0 + 60_000}, 1800000, ${sql.json({ ok: [1, 2] })})`;
    } finally {
      await sql.end();
    }
    const store = await PostgresJobStore.open(await database.connect());
    stores.push(store);
    expect(await store.get('ep', 'old-done')).toMatchObject({ status: 'COMPLETED', output: { ok: [1, 2] } });
    const [taken] = await store.take('ep', 'w1', 1, T0 + 1);
    expect(taken).toMatchObject({ id: 'old-queued', input: { n: 1 }, policy: { executionTimeout: 7_000 } });
    expect(await store.get('ep', 'old-queued')).toMatchObject({ executionTimeoutMs: 7_000, executionDeadline: T0 + 1 + 7_000 });
  });

  it('splits the events of a large change over several notifications, each under 8000 bytes, and the peer gets all', async () => {
    database = await createTestDatabase();
    const store = await PostgresJobStore.open(await database.connect());
    const peer = await PostgresJobStore.open(await database.connect());
    stores.push(store, peer);
    const ids: string[] = [];
    for (let i = 0; i < 300; i++) ids.push((await store.submit('ep', request(), {}, T0)).id);
    const seen = new Set<string>();
    peer.subscribe((event) => {
      if (event.type === 'changed') seen.add(event.jobId);
    });
    expect(await store.take('ep', 'w1', 300, T0)).toHaveLength(300);
    await eventually(() => expect(seen.size).toBe(300));
  });
});

describe('PostgresJobStore: the LISTEN connection', () => {
  it("listens again after its connection is cut, and wakes every endpoint's takers then", async () => {
    const database = await createTestDatabase();
    const store = await PostgresJobStore.open(await database.connect());
    const peer = await PostgresJobStore.open(await database.connect());
    const admin = postgres(database.url, { max: 1, onnotice: () => undefined });
    try {
      await store.createEndpoint('ep');
      const events: StoreEvent[] = [];
      peer.subscribe((event) => events.push(event));
      // The two know each other first (peers.ts): the store sends its events to the peer
      // only once it has heard the peer's hello, which may still be on its way here.
      await eventually(
        async () => {
          await store.submit('ep', request(), {}, T0);
          expect(events).toContainEqual(expect.objectContaining({ type: 'queued', endpointId: 'ep' }));
        },
        10_000,
        200,
      );
      // A connection that has run its LISTEN and waits.
      const listeners = () => admin<{ pid: number }[]>`SELECT pid FROM pg_stat_activity
        WHERE datname = current_database() AND pid <> pg_backend_pid() AND query ILIKE 'listen%' AND state = 'idle'`;
      const cut = await listeners();
      expect(cut.length).toBe(2);
      const before = events.length;
      for (const { pid } of cut) await admin`SELECT pg_terminate_backend(${pid})`;
      // Both listen again on new connections, and the peer's takers are woken (they may have missed changes meanwhile).
      await eventually(async () => {
        const again = (await listeners()).filter(({ pid }) => !cut.some((old) => old.pid === pid));
        expect(again.length).toBe(2);
        expect(events.slice(before)).toContainEqual({ type: 'resync', endpointId: 'ep' });
      });
      const job = await store.submit('ep', request(), {}, T0);
      // Every job queued so far (the probes above too), so that this one is among them.
      await store.take('ep', 'w1', 100, T0);
      await eventually(() =>
        expect(events).toContainEqual(expect.objectContaining({ type: 'changed', endpointId: 'ep', jobId: job.id, status: 'IN_PROGRESS' })),
      );
    } finally {
      await admin.end();
      await store.close();
      await peer.close();
      await database.drop();
    }
  });
});

describe('two harnesses on one database: the take hint', () => {
  it("hands a job to the other process's waiting taker when the submitting process said it had one but did not take it", async () => {
    const database = await createTestDatabase();
    const storeA = await PostgresJobStore.open(await database.connect(2));
    await storeA.createEndpoint('ep');
    const storeB = await PostgresJobStore.open(await database.connect(2));
    // A answers B's hello (peers.ts), and B reads again: from then on A notifies B.
    await new Promise<void>((resolve) => {
      const unsubscribe = storeB.subscribe((event) => {
        if (event.type !== 'resync') return;
        unsubscribe();
        resolve();
      });
    });
    const harnessB = new Harness({ store: storeB });
    try {
      const endpointB = harnessB.endpoint('ep');
      // B's worker waits (its first take finds the queue empty, then it parks).
      const taking = endpointB.take('wb', 1);
      await eventually(async () => expect((await storeB.getWorker('ep', 'wb'))?.initializing).toBe(false));
      const told: StoreEvent[] = [];
      storeB.subscribe((event) => told.push(event));
      // A says a taker of its own waits, and none takes the job: B takes it after its moment.
      const job = await storeA.submit('ep', request(), { takerWaiting: true }, harnessB.clock.now());
      const [taken] = await taking;
      expect(taken?.id).toBe(job.id);
      expect(told).toContainEqual(expect.objectContaining({ type: 'queued', endpointId: 'ep', takerWaitingFor: job.id }));
    } finally {
      await harnessB.close();
      await storeA.close();
      await database.drop();
    }
  });
});

describe('PostgresJobStore: events missed while the LISTEN connection was down', () => {
  let database: TestDatabase | undefined;
  let admin: postgres.Sql | undefined;
  afterEach(async () => {
    await admin?.end();
    admin = undefined;
    await database?.drop();
    database = undefined;
  });

  /** End a job by a statement that notifies no one: as a change made through another harness while this one's LISTEN connection was down. */
  const endUnannounced = async (sql: postgres.Sql, jobId: string, status: 'COMPLETED' | 'CANCELLED'): Promise<void> => {
    const now = Date.now();
    await sql`UPDATE sw_jobs SET status = ${status}, worker_id = NULL, output = ${status === 'COMPLETED' ? sql.json({ ok: 1 }) : null},
      ended_at = ${now}, delete_at = ${now + 60_000}, execution_deadline = NULL WHERE id = ${jobId}`;
  };

  const cutListen = async (sql: postgres.Sql): Promise<number> =>
    (
      await sql`SELECT pg_terminate_backend(pid) AS cut FROM pg_stat_activity
      WHERE datname = current_database() AND pid <> pg_backend_pid() AND query ILIKE 'listen%'`
    ).length;

  it("wakes a reader waiting for a job's end when it listens again, so it reads the end it was not told of", async () => {
    database = await createTestDatabase();
    admin = postgres(database.url, { max: 1, onnotice: () => undefined });
    const harness = new Harness({ store: await PostgresJobStore.open(await database.connect()) });
    try {
      const endpoint = harness.endpoint('ep');
      const job = await endpoint.submit(request());
      expect(await endpoint.tryTake('w1', 1)).toHaveLength(1);
      let answered = false;
      const ended = endpoint.waitForEnd(job.id, 120_000).finally(() => (answered = true));
      // Its first read done, the reader sleeps until an event about the job.
      await sleep(200);
      await endUnannounced(admin, job.id, 'COMPLETED');
      await sleep(200);
      expect(answered).toBe(false);
      expect(await cutListen(admin)).toBe(1);
      await expect(ended).resolves.toMatchObject({ id: job.id, status: 'COMPLETED', output: { ok: 1 } });
    } finally {
      await harness.close();
    }
  });

  it("sends a stop for a job the worker's heartbeat lists that no longer runs with it (a cancel whose stop this harness missed)", async () => {
    database = await createTestDatabase();
    admin = postgres(database.url, { max: 1, onnotice: () => undefined });
    const server = await createHarnessServer({ store: database.url, port: 0, rateLimits: false, workerApi: { longPollMs: 2_000 } });
    try {
      const ids: string[] = [];
      for (let i = 0; i < 2; i++) ids.push(((await call('POST', `${server.url}/v2/ep/run`, { body: { input: { i } } })).json as { id: string }).id);
      const [cancelled, running] = ids as [string, string];
      expect((await call('GET', `${server.url}/v2/ep/job-take-batch/w1?batch_size=2`)).json).toHaveLength(2);
      await endUnannounced(admin, cancelled, 'CANCELLED');
      expect((await call('GET', `${server.url}/v2/ep/ping/w1?job_id=${cancelled},${running}`)).status).toBe(200);
      const stop = await call('GET', `${server.url}/v2/ep/job-stop/w1`);
      expect(stop.json).toEqual({ jobsToStop: [cancelled], reasons: { [cancelled]: 'cancelled' }, attempts: { [cancelled]: 1 } });
      // Listed again (its handler has not stopped yet): the stop was sent, not sent twice; its own job, still running with it, gets none.
      expect((await call('GET', `${server.url}/v2/ep/ping/w1?job_id=${cancelled},${running}`)).status).toBe(200);
      expect((await call('GET', `${server.url}/v2/ep/job-stop/w1`)).status).toBe(204);
    } finally {
      await server.close();
    }
  });
});

describe('createHarnessServer({ store })', () => {
  it('opens the PostgreSQL store the option names, serves jobs from it, and closes it with the server', async () => {
    const database = await createTestDatabase();
    try {
      const server = await createHarnessServer({ store: database.url, port: 0, rateLimits: false });
      expect(server.config.harness.store.kind).toBe('postgres');
      const run = await call('POST', `${server.url}/v2/ep/run`, { body: { input: { n: 1 } } });
      const { id } = run.json as { id: string };
      await server.close();
      const reopened: JobStore = await PostgresJobStore.open(await database.connect());
      expect(await reopened.get('ep', id)).toMatchObject({ status: 'IN_QUEUE' });
      await reopened.close();
    } finally {
      await database.drop();
    }
  });

  it('refuses a store that is neither memory nor a PostgreSQL connection string, and a harness with a store', async () => {
    await expect(createHarnessServer({ store: 'mysql://db/x', port: 0 })).rejects.toMatchObject({
      code: 'SW_INVALID_OPTIONS',
      message: expect.stringMatching(/"memory" or a PostgreSQL connection string/),
    });
    // The pool size is checked before anything connects.
    await expect(createHarnessServer({ store: 'postgres://127.0.0.1:1/x', storePoolSize: 0, port: 0 })).rejects.toMatchObject({
      code: 'SW_INVALID_OPTIONS',
      message: expect.stringMatching(/pool size/),
    });
    const harness = new Harness();
    // @ts-expect-error the type refuses both too; JavaScript callers get the error
    await expect(createHarnessServer({ harness, store: 'memory', port: 0 })).rejects.toMatchObject({ code: 'SW_INVALID_OPTIONS' });
    await harness.close();
  });
});
