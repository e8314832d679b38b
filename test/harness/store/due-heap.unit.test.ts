/**
 * DueHeap (the in-memory store's deadlines, replacing DeadlineQueue): pops in due
 * order, ties in the order pushed, over many entries.
 */
import { describe, expect, it } from 'vitest';
import { DueHeap } from '../../../src/harness/store/due-heap.js';

describe('DueHeap', () => {
  it('pops in due order, ties in the order pushed', () => {
    const heap = new DueHeap();
    heap.push(300, 'ep', 'c', 'ttl');
    heap.push(100, 'ep', 'a', 'ttl');
    heap.push(200, 'ep', 'b1', 'execution');
    heap.push(200, 'ep', 'b2', 'retention');
    expect(heap.peek()?.jobId).toBe('a');
    const popped: string[] = [];
    for (let entry = heap.pop(); entry; entry = heap.pop()) popped.push(`${entry.jobId}@${entry.due}:${entry.kind}`);
    expect(popped).toEqual(['a@100:ttl', 'b1@200:execution', 'b2@200:retention', 'c@300:ttl']);
    expect(heap.size).toBe(0);
  });

  it('keeps the order over thousands of entries pushed in scrambled order', () => {
    const heap = new DueHeap();
    const dues: number[] = [];
    for (let i = 0; i < 5_000; i++) {
      const due = (i * 7_919) % 10_007;
      dues.push(due);
      heap.push(due, 'ep', `j${i}`, 'ttl');
    }
    const popped: number[] = [];
    for (let entry = heap.pop(); entry; entry = heap.pop()) popped.push(entry.due);
    expect(popped).toEqual([...dues].sort((x, y) => x - y));
  });
});
