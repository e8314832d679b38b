/**
 * joinChunks on a restarted stream (issue 13): the job ran again, and a reader holds
 * chunks of several attempts. Only the last attempt's chunks count.
 */
import { describe, expect, it } from 'vitest';
import { joinChunks, lastAttemptChunks } from '../../src/worker/join-chunks.js';
import { splitYield } from '../../src/worker/stream-chunker.js';
import type { StreamChunk } from '../../src/job/index.js';

const stamped = (chunks: readonly StreamChunk[], attempt: number): StreamChunk[] =>
  chunks.map((c) => ({ output: c.output, metrics: { ...c.metrics, attempt } }));

describe('joinChunks across attempts', () => {
  it('keeps only the highest attempt, wherever its chunks are', () => {
    const first = stamped([...splitYield('a'.repeat(100), 0, { maxChunkBytes: 32 }), ...splitYield('tail', 4, { maxChunkBytes: 32 })], 1);
    const second = stamped([...splitYield('b'.repeat(60), 0, { maxChunkBytes: 32 }), ...splitYield('end', 2, { maxChunkBytes: 32 })], 2);
    // A split yield of attempt 1 left half-read: it must not make the stream malformed.
    expect(joinChunks([...first.slice(0, 2), ...second])).toEqual(['b'.repeat(60), 'end']);
    expect(joinChunks([...first, ...second])).toEqual(['b'.repeat(60), 'end']);
    expect(lastAttemptChunks([...first, ...second])).toEqual(second);
  });

  it('without attempts (the platform), a second stream_index 0 starts the stream over', () => {
    const chunk = (i: number, v: string): StreamChunk => ({ output: v, metrics: { stream_index: i } });
    expect(joinChunks([chunk(0, 'x0'), chunk(1, 'x1'), chunk(2, 'x2'), chunk(0, 'y0'), chunk(1, 'y1')])).toEqual(['y0', 'y1']);
    // Parts of one yield out of order are not a restart.
    const parts = splitYield('z'.repeat(90), 0, { maxChunkBytes: 32 });
    expect(joinChunks([...parts].reverse())).toEqual(['z'.repeat(90)]);
    // Chunks without metrics stay as they are.
    expect(joinChunks([{ output: 1 }, { output: 2 }])).toEqual([1, 2]);
  });
});
