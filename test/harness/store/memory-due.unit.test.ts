/**
 * The in-memory store's deadlines after its deadline heap was rebuilt: thousands of stale
 * entries (the ttl and execution deadlines of jobs the retention deleted) make the store
 * refill the heap from its jobs (memory-state.ts rebuildDue); every deadline left must still
 * fire at its time, once.
 */
import { describe, expect, it } from 'vitest';
import { MemoryJobStore } from '../../../src/harness/store/memory-job-store.js';
import { parseJobRequest } from '../../../src/job/index.js';

const T0 = 1_700_000_000_000;
const JOBS = 1_500;

describe('memory store deadlines past a rebuild of its heap', () => {
  it('times out, expires and deletes each job once, at its time', async () => {
    const store = new MemoryJobStore();
    const policy = { ttl: 300_000, executionTimeout: 90_000 };
    // A first batch run to its end: a minute's retention (/runsync) each; its execution entries are stale now.
    for (let i = 0; i < JOBS; i++) await store.submit('ep', parseJobRequest({ input: { i } }), { sync: true }, T0);
    for (const job of await store.take('ep', 'w1', JOBS, T0)) await store.complete('ep', job.id, 'w1', { kind: 'output', output: 1 }, job.attempt, T0 + 1);
    // 500 jobs running when the heap is rebuilt below: their execution deadlines must come through it.
    for (let i = 0; i < 500; i++) await store.submit('ep', parseJobRequest({ input: { i }, policy }), { sync: true }, T0 + 1_000);
    expect(await store.take('ep', 'w1', 500, T0 + 1_000)).toHaveLength(500);
    // The first batch deleted by its retention: its ttl entries go stale too, and outnumber the live ones.
    expect((await store.applyDue(T0 + 61_001)).deleted).toHaveLength(JOBS);
    // So the next submission refills the heap from the jobs.
    for (let i = 0; i < 1_000; i++) await store.submit('ep', parseJobRequest({ input: { i }, policy }), { sync: true }, T0 + 62_000);
    expect(store.peekNextDueAt()).toBe(T0 + 91_000);
    const timedOut = await store.applyDue(T0 + 91_000);
    expect(timedOut.ended.map((job) => job.status)).toEqual(Array.from({ length: 500 }, () => 'TIMED_OUT'));
    expect(timedOut.stops).toHaveLength(500);
    expect(timedOut.deleted).toHaveLength(0);
    // Next: the retention of the timed-out jobs, then the ttl of the 1 000 still queued.
    expect(store.peekNextDueAt()).toBe(T0 + 151_000);
    expect((await store.applyDue(T0 + 151_000)).deleted).toHaveLength(500);
    expect(store.peekNextDueAt()).toBe(T0 + 362_000);
    const expired = await store.applyDue(T0 + 362_000);
    expect(expired.deleted).toHaveLength(1_000);
    expect(expired.ended).toHaveLength(0);
    expect(store.peekNextDueAt()).toBeUndefined();
    expect((await store.applyDue(T0 + 10_000_000)).deleted).toHaveLength(0);
    await store.close();
  });
});
