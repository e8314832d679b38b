/**
 * Jobs claimed ahead for a worker draining a deep queue (issue 33, item 2;
 * store/postgres/take-ahead.ts), on the run's embedded PostgreSQL: a worker that comes
 * back for more at once is answered from jobs claimed for it beforehand; each job still
 * reaches one worker once; a held job that is cancelled never reaches it; what it does
 * not take within the hold goes back to the queue as never taken (attempt restored,
 * neither lost nor retried), as do the held jobs of a worker removed, whose jobs in hand
 * are requeued as lost.
 */
import { afterEach, expect, it } from 'vitest';
import { openHarnessDatabase } from '../../../packages/platform/src/harness/harness-database.js';
import type { PostgresDatabase } from '../../../packages/platform/src/harness/postgres/database.js';
import { PostgresJobStore } from '../../../packages/platform/src/harness/store/postgres/postgres-job-store.js';
import { waitFor } from '../../kit/index.js';
import { createTestDatabase, type TestDatabase } from '../../postgres/test-database.js';
import { request } from './job-store-conformance.js';

let database: TestDatabase | undefined;
let handle: PostgresDatabase | undefined;
let store: PostgresJobStore | undefined;
afterEach(async () => {
  await store?.close();
  await handle?.close();
  await database?.drop();
});

const T0 = Date.now();
const RULES = { maxRequeues: 3 };

it('answers a draining worker from jobs claimed ahead, each job to one worker once; unused ones go back as never taken', async () => {
  database = await createTestDatabase();
  const { sql } = (handle = await openHarnessDatabase(database.url, { poolSize: 4 }));
  const opened = await PostgresJobStore.open(handle);
  store = opened;
  const ids: string[] = [];
  for (let n = 0; n < 40; n++) ids.push((await opened.submit('ep', request({ input: { n } }), {}, T0 + n)).id);
  const inProgressOf = async (workerId: string): Promise<string[]> =>
    (await sql<{ id: string }[]>`SELECT id FROM sw_jobs WHERE status = 'IN_PROGRESS' AND worker_id = ${workerId} ORDER BY queue_seq`).map((row) => row.id);

  // A worker that takes 4, then 4 again at once, is draining: its second claim takes as many again ahead.
  const handed: string[] = [];
  for (let take = 0; take < 2; take++) handed.push(...(await opened.take('ep', 'w1', 4, T0 + 100)).map((job) => job.id));
  expect(handed).toEqual(ids.slice(0, 8));
  const claimed = await inProgressOf('w1');
  expect(claimed.length).toBeGreaterThan(8);
  // The next takes come from what is held, in the queue's order, without handing anything twice.
  handed.push(...(await opened.take('ep', 'w1', 2, T0 + 101)).map((job) => job.id));
  expect(handed).toEqual(ids.slice(0, 10));
  // Another worker gets the queue's next jobs, none of those held for w1.
  const other = (await opened.take('ep', 'w2', 3, T0 + 102)).map((job) => job.id);
  expect(other.filter((id) => claimed.includes(id))).toEqual([]);
  // A held job cancelled meanwhile never reaches w1.
  const held = (await inProgressOf('w1')).filter((id) => !handed.includes(id));
  expect(held.length).toBeGreaterThan(1);
  const cancelled = held[0] as string;
  await opened.cancel('ep', cancelled, T0 + 103);
  const next = (await opened.take('ep', 'w1', 1, T0 + 104)).map((job) => job.id);
  expect(next).not.toContain(cancelled);
  handed.push(...next);
  expect(new Set([...handed, ...other]).size).toBe(handed.length + other.length);

  // Not taken within the hold: back in the queue as never taken, at their places.
  const unused = (await inProgressOf('w1')).filter((id) => !handed.includes(id));
  expect(unused.length).toBeGreaterThan(0);
  await waitFor(async () => (await inProgressOf('w1')).length === handed.length, 'the held jobs go back to the queue', 10_000, 50);
  for (const id of unused) expect(await opened.get('ep', id)).toMatchObject({ status: 'IN_QUEUE', attempt: 0, lost: 0, retries: 0 });
  const [first] = await opened.take('ep', 'w3', 1, T0 + 200);
  expect(first?.id).toBe(unused[0]);

  // Removed while holding jobs ahead: those go back as never taken, the ones in hand as lost.
  const inHand: string[] = [];
  for (let take = 0; take < 2; take++) inHand.push(...(await opened.take('ep', 'w4', 4, T0 + 300)).map((job) => job.id));
  const heldForW4 = (await inProgressOf('w4')).filter((id) => !inHand.includes(id));
  expect(heldForW4.length).toBeGreaterThan(0);
  const gone = await opened.removeWorker('ep', 'w4', RULES, T0 + 301);
  expect([...(gone?.requeued ?? [])].sort()).toEqual([...inHand].sort());
  for (const id of heldForW4) expect(await opened.get('ep', id)).toMatchObject({ status: 'IN_QUEUE', attempt: 0, lost: 0 });
  for (const id of inHand) expect(await opened.get('ep', id)).toMatchObject({ status: 'IN_QUEUE', lost: 1 });
}, 60_000);
