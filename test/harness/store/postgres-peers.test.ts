/**
 * Notifications only while another harness listens (issue 33, item 3; peers.ts): a
 * PostgreSQL store alone sends no event notifications (counted on the wire); once a
 * second store listens, its changes reach it; and a store that did not know of the other
 * (it had forgotten it, as a late joiner's hello may still be on the way) wakes it with
 * a 'here' once it hears from it, so the other's waiters read again and miss no change.
 */
import { expect, it } from 'vitest';
import { sleep } from '../../../src/clock/index.js';
import { Harness, ManualClock } from '../../../src/harness/index.js';
import type { StoreEvent } from '../../../src/harness/store/job-store.js';
import { PostgresJobStore } from '../../../packages/platform/src/harness/store/postgres/postgres-job-store.js';
import { eventually } from '../../kit/index.js';
import { usePeerDatabases } from '../../postgres/peer-databases.js';
import { request } from './job-store-conformance.js';

const databases = usePeerDatabases();

it('sends no event notifications while alone, and every change to a second store once it listens', async () => {
  const { database, counter } = await databases.counted();
  const a = await PostgresJobStore.open(await databases.handleOn(counter.url));
  databases.closeAfter(() => a.close());
  // Its hello, heard by nobody.
  await eventually(() => expect(counter.notifications()).toBe(1));
  for (let n = 0; n < 10; n++) {
    const job = await a.submit('ep', request(), {}, 1_000);
    const [taken] = await a.take('ep', 'w1', 1, 1_001);
    await a.complete('ep', job.id, 'w1', { kind: 'output', output: n }, taken?.attempt, 1_002);
  }
  await sleep(200);
  expect(counter.notifications()).toBe(1);

  const b = await PostgresJobStore.open(await databases.handleOn(database.url));
  databases.closeAfter(() => b.close());
  const heard: StoreEvent[] = [];
  b.subscribe((event) => heard.push(event));
  // A answers B's hello ('here'): B reads again (resync), and A now sends its events.
  await eventually(() => expect(heard).toContainEqual({ type: 'resync', endpointId: 'ep' }));
  const job = await a.submit('ep', request(), {}, 2_000);
  await eventually(() => expect(heard).toContainEqual(expect.objectContaining({ type: 'queued', endpointId: 'ep' })));
  await a.cancel('ep', job.id, 2_001);
  await eventually(() => expect(heard).toContainEqual(expect.objectContaining({ type: 'changed', endpointId: 'ep', jobId: job.id })));
});

it("wakes the other store's waiting taker when it hears from a store it did not know of (its changes were not notified)", async () => {
  const database = await databases.database();
  // A forgets a peer at once (silent 1 ms): it never notifies B's takers of its jobs, and answers each of B's beats with 'here'.
  const a = await PostgresJobStore.open(await databases.handleOn(database.url), { peerTimes: { beatMs: 60_000, silentMs: 1 } });
  databases.closeAfter(() => a.close());
  const b = await PostgresJobStore.open(await databases.handleOn(database.url), { peerTimes: { beatMs: 300, silentMs: 60_000 } });
  databases.closeAfter(() => b.close());
  const heard: StoreEvent[] = [];
  b.subscribe((event) => heard.push(event));
  // A ManualClock: B's parked take never looks again by itself; only an event wakes it.
  const harness = new Harness({ clock: new ManualClock(), store: b });
  databases.closeAfter(() => harness.close());
  const endpoint = harness.endpoint('ep');
  await b.createEndpoint('ep');
  expect(await endpoint.take('w1', 1, AbortSignal.timeout(50))).toEqual([]);
  const waiting = endpoint.take('w1', 1);
  const job = await a.submit('ep', request(), {}, 1_000);
  const [taken] = await waiting;
  expect(taken?.id).toBe(job.id);
  // It was woken by A's 'here' (a resync), not by a notification of the submit.
  expect(heard.filter((event) => event.type === 'queued')).toEqual([]);
  expect(heard).toContainEqual({ type: 'resync', endpointId: 'ep' });
});
