/**
 * An answer or nothing (issue 49 item 3): a /run that cannot be stored in time is answered
 * 503 SW_STORE_UNAVAILABLE with Retry-After, and is then really not stored, so a client
 * that resends does not make a duplicate. During a database shutdown under load, some /run
 * calls got no answer within 5 s and were committed later. Here the job table is locked
 * from another connection (the test database on the run's PostgreSQL): a first submission's
 * statement is sent and waits on the lock; a second one, waiting behind it, is answered 503
 * while the lock is still held (before: no answer until the lock went); once the lock is
 * released the first is stored, the second never is.
 */
import postgres from 'postgres';
import { afterEach, describe, expect, it } from 'vitest';
import { PostgresJobStore } from '../../packages/platform/src/harness/store/postgres/postgres-job-store.js';
import { call, errorCode, startTestServer, waitFor, within, type TestServer } from '../kit/index.js';
import { createTestDatabase, type TestDatabase } from '../postgres/test-database.js';

let database: TestDatabase | undefined;
let server: TestServer | undefined;
const clients: postgres.Sql[] = [];

afterEach(async () => {
  await server?.close();
  server = undefined;
  await Promise.all(clients.splice(0).map((client) => client.end({ timeout: 5 })));
  await database?.drop();
  database = undefined;
});

describe('a submission the store cannot take in time', () => {
  it('is answered 503 SW_STORE_UNAVAILABLE with Retry-After while the store is blocked, and is never stored', { timeout: 120_000 }, async () => {
    database = await createTestDatabase();
    const store = await PostgresJobStore.open(await database.connect(4), { submitWaitMs: 1_000 });
    server = await startTestServer({}, { store });
    const url = server.endpointUrl();
    expect((await call('POST', `${url}/run`, { body: { input: { n: 0 } } })).status).toBe(200);

    const locker = postgres(database.url, { max: 1, onnotice: () => undefined });
    const observer = postgres(database.url, { max: 1, onnotice: () => undefined });
    clients.push(locker, observer);
    let release: () => void = () => undefined;
    let locked = false;
    const holding = locker.begin(async (tx) => {
      await tx`LOCK TABLE sw_jobs IN SHARE MODE`;
      locked = true;
      await new Promise<void>((resolve) => (release = resolve));
    });
    await waitFor(() => locked, 'the job table locked', 30_000, 10);

    const first = call('POST', `${url}/run`, { body: { input: { n: 1 } } });
    // Its statement is sent and waits on the lock.
    await waitFor(
      async () => (await observer`SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%INSERT INTO sw_jobs%'`).length > 0,
      "the first submission's statement waiting on the lock",
      30_000,
      20,
    );
    const second = await within(
      call('POST', `${url}/run`, { body: { input: { n: 2 } } }),
      'an answer to the second submission while the store is blocked',
      30_000,
    );
    expect(second.status).toBe(503);
    expect(errorCode(second)).toBe('SW_STORE_UNAVAILABLE');
    expect(second.headers.get('retry-after')).toBe('5');
    expect((second.json as { error: { message: string } }).error.message).toContain('it was not stored');

    release();
    await holding;
    expect((await first).status).toBe(200);
    // Submissions go one statement after the other: once a third is stored, the second could not come later.
    expect((await call('POST', `${url}/run`, { body: { input: { n: 3 } } })).status).toBe(200);
    const rows = await observer<{ n: number }[]>`SELECT (request->'input'->>'n')::int AS n FROM sw_jobs ORDER BY 1`;
    expect(rows.map((row) => row.n)).toEqual([0, 1, 3]);
  });
});
