/**
 * Whose clock (issue 33, item 5; clock-skew.ts): a harness whose clock is far from
 * PostgreSQL's would apply shared deadlines early or late, so the store refuses it with
 * a one-line error when it opens, and refuses changes when a measure taken as its LISTEN
 * connection comes back finds the clock gone beyond the bound.
 */
import postgres from 'postgres';
import { afterEach, expect, it } from 'vitest';
import { openJobStore } from '../../../packages/platform/src/harness/open-store.js';
import { PostgresJobStore } from '../../../packages/platform/src/harness/store/postgres/postgres-job-store.js';
import { eventually } from '../../kit/index.js';
import { createTestDatabase, type TestDatabase } from '../../postgres/test-database.js';
import { request } from './job-store-conformance.js';

let database: TestDatabase | undefined;
afterEach(async () => {
  await database?.drop();
  database = undefined;
});

const offsetClock = (offsetMs: () => number) => ({ now: () => Date.now() + offsetMs() });

it("refuses to open on a clock 30 s ahead of or behind the database's, in one line, and opens on one within the bound", async () => {
  database = await createTestDatabase();
  const handle = await database.connect(2);
  for (const [offset, word] of [
    [30_000, 'ahead of'],
    [-30_000, 'behind'],
  ] as const) {
    const refused = await PostgresJobStore.open(handle, { clock: offsetClock(() => offset) }).then(
      () => undefined,
      (error: unknown) => error as { code?: string; message: string },
    );
    expect(refused?.code).toBe('SW_CLOCK_SKEW');
    expect(refused?.message).toMatch(new RegExp(`^This machine's clock is 30\\.\\d s ${word} PostgreSQL's \\(at most 2\\.0 s allowed`));
    expect(refused?.message).not.toContain('\n');
  }
  // Through the harness's opener (the CLI's --store): the store named, one line.
  const opened = openJobStore(database.url, { clock: offsetClock(() => 30_000) });
  await expect(opened).rejects.toMatchObject({
    code: 'SW_CLOCK_SKEW',
    message: expect.stringMatching(/^Could not open the job store postgres .*: This machine's clock is 30\.\d s ahead of PostgreSQL's[^\n]*$/),
  });
  const store = await PostgresJobStore.open(handle, { clock: offsetClock(() => 500), maxClockSkewMs: 2_000 });
  expect(await store.submit('ep', request(), {}, Date.now())).toMatchObject({ status: 'IN_QUEUE' });
  await store.close();
  const ok = await openJobStore(database.url, {});
  await ok.store.close();
  await ok.database?.close();
});

it('refuses changes once its LISTEN connection comes back with the clock gone beyond the bound', async () => {
  database = await createTestDatabase();
  let offset = 0;
  const errors: unknown[] = [];
  const store = await PostgresJobStore.open(await database.connect(2), { clock: offsetClock(() => offset), onError: (error) => errors.push(error) });
  const admin = postgres(database.url, { max: 1, onnotice: () => undefined });
  try {
    await store.submit('ep', request(), {}, Date.now());
    offset = 30_000;
    await admin`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
      WHERE datname = current_database() AND pid <> pg_backend_pid() AND query ILIKE 'listen%'`;
    await eventually(() =>
      expect(errors).toContainEqual(expect.objectContaining({ code: 'SW_CLOCK_SKEW', message: expect.stringMatching(/30\.\d s ahead of PostgreSQL's/) })),
    );
    await expect(store.submit('ep', request(), {}, Date.now())).rejects.toMatchObject({ code: 'SW_CLOCK_SKEW' });
    // Reads still answer (nothing is changed on this clock's word).
    expect((await store.health('ep')).jobs.inQueue).toBe(1);
  } finally {
    await admin.end();
    await store.close();
  }
});
