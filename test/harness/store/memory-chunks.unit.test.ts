/**
 * The in-memory store's unread chunks: a job without any shares one frozen empty array
 * (memory-records.ts NO_CHUNKS), so a chunk must land in an array of its own job only, and
 * what readStream answered must not change when later chunks come.
 */
import { describe, expect, it } from 'vitest';
import { MemoryJobStore } from '../../../src/harness/store/memory-job-store.js';
import { parseJobRequest } from '../../../src/job/index.js';

const T0 = 1_700_000_000_000;

describe('memory store chunks', () => {
  it("keeps each job's chunks apart, and a read's answer as it was", async () => {
    const store = new MemoryJobStore();
    const a = await store.submit('ep', parseJobRequest({ input: {} }), {}, T0);
    const b = await store.submit('ep', parseJobRequest({ input: {} }), {}, T0);
    expect((await store.take('ep', 'w1', 2, T0)).map((job) => job.id)).toEqual([a.id, b.id]);
    expect((await store.readStream('ep', a.id)).stream).toEqual([]);
    expect((await store.pushChunk('ep', a.id, 'w1', { output: 'a1' }, 1)).applied).toBe(true);
    expect((await store.peekStream('ep', b.id)) ?? []).toEqual([]);
    expect((await store.get('ep', b.id))?.unreadChunkCount).toBe(0);
    expect((await store.get('ep', a.id))?.unreadChunkCount).toBe(1);
    const first = (await store.readStream('ep', a.id)).stream;
    await store.pushChunk('ep', a.id, 'w1', { output: 'a2' }, 1);
    await store.pushChunk('ep', b.id, 'w1', { output: 'b1' }, 1);
    expect(first.map((chunk) => chunk.output)).toEqual(['a1']);
    expect((await store.readStream('ep', a.id)).stream.map((chunk) => chunk.output)).toEqual(['a2']);
    expect((await store.readStream('ep', b.id)).stream.map((chunk) => chunk.output)).toEqual(['b1']);
    expect((await store.readStream('ep', b.id)).stream).toEqual([]);
    await store.close();
  });
});
