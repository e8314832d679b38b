/**
 * Memory back after a purge (issue 49 item 4): once the memory store has let go of
 * RELEASED_BYTES_TO_COLLECT of request bodies and the loop is idle, the harness server runs
 * a garbage collection itself (an idle process runs none). Seen through the memory-collection
 * diagnostics channel (metrics/garbage-collector.ts; Node's GC entries mark a last-resort
 * collection on Node 22 and 24 with no flag) and, for each, a major collection in Node's own GC
 * entries from its start on: one after the purge, none before it. The same once
 * RELEASED_JOBS_TO_COLLECT small jobs expired (issue 46 item 3: 20 000 finished /runsync
 * jobs a minute after their burst).
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { constants, PerformanceObserver } from 'node:perf_hooks';
import { afterEach, describe, expect, it } from 'vitest';
import {
  collectWhenIdle,
  exposedGc,
  RELEASED_BYTES_TO_COLLECT,
  RELEASED_JOBS_TO_COLLECT,
  type IdleCollector,
} from '../../packages/platform/src/harness/idle-collect.js';
import { MEMORY_COLLECTION_CHANNEL, type MemoryCollection } from '../../src/metrics/garbage-collector.js';
import { MemoryJobStore } from '../../src/harness/store/memory-job-store.js';
import { call, startTestServer, waitFor, type TestServer } from '../kit/index.js';

let server: TestServer | undefined;
let observer: PerformanceObserver | undefined;
let listener: ((message: unknown) => void) | undefined;
let collector: IdleCollector | undefined;

afterEach(async () => {
  observer?.disconnect();
  if (listener) unsubscribe(MEMORY_COLLECTION_CHANNEL, listener);
  listener = undefined;
  collector?.stop();
  collector = undefined;
  await server?.close();
  server = undefined;
});

/** The memory collections this process asks for from now on, and the major collections V8 reported since the first began. */
function memoryCollections(): { count: number; majorsSince: number } {
  const seen = { count: 0, majorsSince: 0, firstAt: Number.POSITIVE_INFINITY };
  listener = (message: unknown) => {
    seen.count++;
    seen.firstAt = Math.min(seen.firstAt, (message as MemoryCollection).startedAt);
  };
  subscribe(MEMORY_COLLECTION_CHANNEL, listener);
  // Entries come after the collection's call returned, so after its message.
  observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const kind = ((entry as { detail?: unknown }).detail as { kind?: number } | null | undefined)?.kind;
      if (kind === constants.NODE_PERFORMANCE_GC_MAJOR && entry.startTime >= seen.firstAt) seen.majorsSince++;
    }
  });
  observer.observe({ entryTypes: ['gc'] });
  return seen;
}

describe('a collection after a large release', () => {
  it("gets Node's gc() without --expose-gc on the command line", () => {
    expect(typeof exposedGc()).toBe('function');
    expect((globalThis as { gc?: unknown }).gc, 'no global gc left behind').toBeUndefined();
  });

  it('collects once the purged bodies add up to 64 MiB and the loop is idle, and not while nothing was released', { timeout: 60_000 }, async () => {
    server = await startTestServer();
    const url = server.endpointUrl();
    // 7 bodies of 9.9 MB: over 64 MiB together.
    const body = JSON.stringify({ input: { pad: 'x'.repeat(9_900_000) } });
    const posts = Math.ceil(RELEASED_BYTES_TO_COLLECT / body.length);
    const collections = memoryCollections();
    for (let i = 0; i < posts; i++) expect((await call('POST', `${url}/run`, { body })).status).toBe(200);
    expect(collections.count, 'nothing released yet: no collection').toBe(0);
    expect((await call('POST', `${url}/purge-queue`)).json).toMatchObject({ removed: posts });
    await waitFor(() => collections.count > 0 && collections.majorsSince > 0, 'a memory collection after the purge, and V8 collecting', 30_000, 50);
  });

  it('collects once many small jobs expired and the sweep is over, though their bytes are far from 64 MiB', { timeout: 60_000 }, async () => {
    const store = new MemoryJobStore();
    collector = collectWhenIdle();
    const now = Date.now();
    // A burst's worth of small jobs (their requests a few bytes each).
    const jobs = 2 * RELEASED_JOBS_TO_COLLECT;
    for (let i = 0; i < jobs; i++) await store.submit('small', { input: { i } }, { bytes: 12 }, now);
    const collections = memoryCollections();
    expect(collections.count, 'nothing released yet: no collection').toBe(0);
    // Their ttl elapses: the store's sweep deletes them all.
    const due = store.peekNextDueAt() ?? now;
    expect((await store.applyDue(due + 30 * 24 * 3_600_000)).deleted).toHaveLength(jobs);
    await waitFor(() => collections.count > 0 && collections.majorsSince > 0, 'a memory collection after the expiry, and V8 collecting', 30_000, 50);
    expect(collector.collections).toBe(1);
    expect(collections.count).toBe(1);
    await store.close();
  });
});
