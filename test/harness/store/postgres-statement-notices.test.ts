/**
 * One statement per change with two harnesses (issue 47, item 5; store/postgres/statement-notices.ts):
 * the submission, the claim and the result statement notify the other harness in their own
 * statement while it listens, instead of an outbox statement after each (counted on the wire:
 * a store of one job at a time sent 3 statements a job alone and up to 6 with a peer). What
 * the other harness hears is what this one's own listeners get: every event, each ended job's
 * view as toJobView builds it (an output, a JSON null output, an error, a retried job).
 */
import { expect, it } from 'vitest';
import { PostgresJobStore } from '../../../packages/platform/src/harness/store/postgres/postgres-job-store.js';
import type { StoreEvent } from '../../../src/harness/store/job-store.js';
import { eventually } from '../../kit/index.js';
import { usePeerDatabases } from '../../postgres/peer-databases.js';
import type { JobResult } from '../../../src/job/job.js';
import { failure, request } from './job-store-conformance.js';

const databases = usePeerDatabases();

const JOBS = 20;
/**
 * No beats during the test (their statements would be counted); every hot statement notifies (no window: the
 * window's coalescing, postgres-notice-window.test.ts, would send some events by the outbox's statement).
 */
const PEER_TIMES = { beatMs: 600_000, silentMs: 1_200_000, noticeWindowMs: 0 };

it('notifies the other harness inside the submission, claim and result statements: 3 statements a job, as alone', async () => {
  const { database, counter } = await databases.counted();
  const a = await PostgresJobStore.open(await databases.handleOn(counter.url), { peerTimes: PEER_TIMES });
  databases.closeAfter(() => a.close());
  // An endpoint to wake: the 'here' that tells B of A wakes each endpoint (resync).
  await a.createEndpoint('ep');
  const own: StoreEvent[] = [];
  a.subscribe((event) => own.push(event));
  const b = await PostgresJobStore.open(await databases.handleOn(database.url), { peerTimes: PEER_TIMES });
  databases.closeAfter(() => b.close());
  const heard: StoreEvent[] = [];
  b.subscribe((event) => heard.push(event));
  // A answered B's hello and B answered A's 'here': each knows the other, and each read its endpoints again
  // (a resync, a statement of A's: awaited before counting).
  await eventually(() => expect(heard).toContainEqual({ type: 'resync', endpointId: 'ep' }));
  await eventually(() => expect(own).toContainEqual({ type: 'resync', endpointId: 'ep' }));

  const before = counter.count();
  const outcomes: readonly JobResult[] = [
    { kind: 'output', output: { n: 1, text: 'ü "quoted"' } },
    { kind: 'output', output: null },
    { kind: 'error', error: { ...failure, error_message: 'bad "input"' } },
  ];
  for (let n = 0; n < JOBS; n++) {
    const job = await a.submit('ep', request({ input: { n } }), {}, 1_000 + n);
    const [taken] = await a.take('ep', 'w1', 1, 1_010 + n);
    expect(taken?.id).toBe(job.id);
    await a.complete('ep', job.id, 'w1', outcomes[n % outcomes.length] as JobResult, taken?.attempt, 1_050 + 2 * n);
  }
  const statements = counter.count() - before;
  // One submission, one claim, one result a job (before: each followed by its notification's statement).
  expect(statements).toBe(3 * JOBS);

  // B heard every event A's own listeners got from these statements, the views built in SQL equal to A's.
  const relevant = (events: readonly StoreEvent[]): StoreEvent[] => events.filter((event) => event.type !== 'resync');
  await eventually(() => expect(relevant(heard)).toHaveLength(relevant(own).length));
  expect(relevant(heard)).toEqual(relevant(own));
  const ended = relevant(heard).filter((event) => event.type === 'changed' && event.status !== 'IN_PROGRESS');
  expect(ended).toHaveLength(JOBS);
  expect(ended.map((event) => (event.type === 'changed' ? event.ended : undefined))).toEqual(
    expect.arrayContaining([expect.objectContaining({ output: null })]),
  );
});
