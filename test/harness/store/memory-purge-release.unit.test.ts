/**
 * The memory store lets go of deleted jobs' requests (issue 49 item 4): its newest-first
 * list kept deleted jobs until a thousand had been deleted, so 13 purged bodies of 10 MB
 * stayed in the harness's heap after `purge-queue`. Now the list is rebuilt once the
 * deleted jobs it holds took COMPACT_AT_BYTES of requests. Checked with WeakRefs and a
 * full GC (exposed through V8's flag for this test).
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { RawJson } from '../../../src/job/raw-json.js';
import { MemoryJobStore } from '../../../src/harness/store/memory-job-store.js';
import { COMPACT_AT_BYTES } from '../../../src/harness/store/memory-endpoint.js';
import { onRequestBytesReleased } from '../../../src/harness/store/released-bytes.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** Submit `count` jobs whose inputs are RawJson texts of `bytes` each; answer WeakRefs to those inputs (no other reference kept here). */
async function submitBig(store: MemoryJobStore, count: number, bytes: number): Promise<Array<WeakRef<RawJson>>> {
  const refs: Array<WeakRef<RawJson>> = [];
  for (let i = 0; i < count; i++) {
    const input = new RawJson(`"${String(i).repeat(bytes - 2)}"`.slice(0, bytes));
    refs.push(new WeakRef(input));
    // The route hands a large body's input over as its text (RawJson), typed as the input it stands for.
    await store.submit('big', { input: input as unknown as Record<string, unknown> }, { bytes }, Date.now());
  }
  return refs;
}

/** WeakRefs are held until the end of the current job: let it end, then collect. */
async function collect(): Promise<void> {
  await new Promise((resolve) => setImmediate(resolve));
  gc();
  await new Promise((resolve) => setImmediate(resolve));
}

describe('memory store: deleted jobs let go of their requests', () => {
  it('a purged queue of big requests is collectable at once (no thousand deletions needed)', async () => {
    const store = new MemoryJobStore();
    const size = Math.ceil(COMPACT_AT_BYTES / 2) + 1;
    const refs = await submitBig(store, 4, size);
    // A small job submitted after them stays: the list still serves it.
    const kept = await store.submit('big', { input: { small: true } }, { bytes: 20 }, Date.now());
    expect(await store.purgeQueue('big')).toBe(5);
    const again = await store.submit('big', { input: { small: true } }, { bytes: 20 }, Date.now());
    await collect();
    expect(refs.map((ref) => ref.deref() === undefined)).toEqual([true, true, true, true]);
    // The newest-first list still serves what is left (the purged small one is gone too).
    const page = await store.list('big', { offset: 0, limit: 10 });
    expect(page.jobs.map((job) => job.id)).toEqual([again.id]);
    expect(kept.id).not.toBe(again.id);
    await store.close();
  });

  it('reports the request bytes each compaction let go of (what a harness counts toward a collection)', async () => {
    const store = new MemoryJobStore();
    const released: number[] = [];
    const unsubscribe = onRequestBytesReleased((bytes) => released.push(bytes));
    try {
      const size = Math.ceil(COMPACT_AT_BYTES / 2) + 1;
      await submitBig(store, 4, size);
      expect(released, 'nothing deleted yet').toEqual([]);
      expect(await store.purgeQueue('big')).toBe(4);
      // Two bodies pass COMPACT_AT_BYTES: two compactions of two bodies each.
      expect(released).toEqual([2 * size, 2 * size]);
    } finally {
      unsubscribe();
      await store.close();
    }
  });
});
