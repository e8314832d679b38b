/**
 * Wake-ups coalesced with two harnesses (issue 47, item 5; store/postgres/statement-notices.ts): each commit
 * that notifies wakes every LISTENing connection of the database, which reads the notification queue in a
 * transaction of its own, so at most one hot statement a window notifies and the others' events ride on a
 * later one (or on the outbox's statement when none follows). Counted on the wire: statements that call
 * pg_notify during a drain (before: every submission, claim and result statement). What the other harness
 * hears is still every event this one's own listeners got, each ended job's view included.
 */
import { expect, it } from 'vitest';
import { PostgresJobStore } from '../../../packages/platform/src/harness/store/postgres/postgres-job-store.js';
import type { StoreEvent } from '../../../src/harness/store/job-store.js';
import { eventually } from '../../kit/index.js';
import { usePeerDatabases } from '../../postgres/peer-databases.js';
import type { StatementCounter } from '../../postgres/statement-counter.js';
import { request } from './job-store-conformance.js';

const databases = usePeerDatabases(4);

/** Two stores on one database, each knowing the other: A (through the counter) and B; every event each one's listeners got. */
async function twoStores(noticeWindowMs: number): Promise<{ a: PostgresJobStore; own: StoreEvent[]; heard: StoreEvent[]; counter: StatementCounter }> {
  const { database, counter } = await databases.counted();
  // No beats during the test (their notifications would be counted).
  const peerTimes = { beatMs: 600_000, silentMs: 1_200_000, noticeWindowMs };
  const a = await PostgresJobStore.open(await databases.handleOn(counter.url), { peerTimes });
  let aOpen = true;
  databases.closeAfter(async () => {
    if (aOpen) await a.close();
    aOpen = false;
  });
  await a.createEndpoint('ep');
  const own: StoreEvent[] = [];
  a.subscribe((event) => own.push(event));
  const b = await PostgresJobStore.open(await databases.handleOn(database.url), { peerTimes });
  databases.closeAfter(() => b.close());
  const heard: StoreEvent[] = [];
  b.subscribe((event) => heard.push(event));
  // Each knows the other once each read its endpoints again (the 'here' each answered).
  await eventually(() => expect(heard).toContainEqual({ type: 'resync', endpointId: 'ep' }));
  await eventually(() => expect(own).toContainEqual({ type: 'resync', endpointId: 'ep' }));
  return { a, own, heard, counter };
}

/** An event's JSON with its keys sorted at every level (a view built in SQL names them in another order). */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_, inner: unknown) =>
    inner !== null && typeof inner === 'object' && !Array.isArray(inner)
      ? Object.fromEntries(Object.entries(inner).sort(([x], [y]) => x.localeCompare(y)))
      : inner,
  );
}

/** The events of the jobs, in a fixed order (statements in flight together commit in any order). */
function jobEvents(events: readonly StoreEvent[]): string[] {
  return events
    .filter((event) => event.type !== 'resync')
    .map(canonical)
    .sort();
}

const JOBS = 120;
const TAKERS = 16;

it('notifies the other harness once a window during a drain, and it hears every event of the drain, views included', async () => {
  // A window longer than the test: the first hot statement notifies, every later one's events are held until the close.
  const { a, own, heard, counter } = await twoStores(600_000);
  const before = counter.notifications();
  await Promise.all(Array.from({ length: JOBS }, (_, n) => a.submit('ep', request({ input: { n } }), {}, 1_000 + n)));
  let done = 0;
  await Promise.all(
    Array.from({ length: TAKERS }, async () => {
      while (done < JOBS) {
        const [job] = await a.take('ep', 'w1', 1, 2_000 + done);
        if (!job) continue;
        await a.complete('ep', job.id, 'w1', { kind: 'output', output: { id: job.id } }, job.attempt, 3_000 + done);
        done++;
      }
    }),
  );
  // Before: every submission, claim and result statement called pg_notify (a few dozen here).
  expect(counter.notifications() - before).toBe(1);
  const ended = own.filter((event) => event.type === 'changed' && event.status === 'COMPLETED');
  expect(ended).toHaveLength(JOBS);
  // Closing, A sends what it held (before its 'bye'): B heard every event A's listeners got.
  await a.close();
  await eventually(() => expect(jobEvents(heard)).toEqual(jobEvents(own)));
  expect(heard.filter((event) => event.type === 'changed' && event.ended?.output !== undefined)).toHaveLength(JOBS);
});

it('sends the events a window held in a statement of their own when no later statement carries them', async () => {
  const { a, own, heard } = await twoStores(200);
  const job = await a.submit('ep', request({ input: {} }), {}, 1_000);
  const [taken] = await a.take('ep', 'w1', 1, 1_010);
  expect(taken?.id).toBe(job.id);
  await a.complete('ep', job.id, 'w1', { kind: 'output', output: 'ok' }, taken?.attempt, 1_020);
  // No statement follows, and A stays open: the held events go out by the outbox's statement within two windows.
  await eventually(() => expect(jobEvents(heard)).toEqual(jobEvents(own)));
  expect(heard).toContainEqual(expect.objectContaining({ type: 'changed', jobId: job.id, status: 'COMPLETED' }));
});
