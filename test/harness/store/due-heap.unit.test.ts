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

describe('DueHeap past its first capacity', () => {
  it('keeps every field and the order while it grows, is popped half-way, grows again and shrinks back, over several endpoints', () => {
    const heap = new DueHeap();
    const kinds = ['ttl', 'execution', 'retention'] as const;
    const pushed: Array<{ due: number; order: number; endpointId: string; jobId: string; kind: (typeof kinds)[number] }> = [];
    let order = 0;
    const push = (count: number): void => {
      for (let i = 0; i < count; i++, order++) {
        const entry = {
          due: (order * 7_919) % 1_009,
          order,
          endpointId: `ep-${order % 3}`,
          jobId: `job-${order}`,
          kind: kinds[order % 3] as (typeof kinds)[number],
        };
        pushed.push(entry);
        heap.push(entry.due, entry.endpointId, entry.jobId, entry.kind);
      }
    };
    const expected = (): string[] => pushed.sort((a, b) => a.due - b.due || a.order - b.order).map((e) => `${e.due}:${e.endpointId}:${e.jobId}:${e.kind}`);
    const popped: string[] = [];
    const pop = (count: number): void => {
      for (let i = 0; i < count; i++) {
        const entry = heap.pop();
        if (!entry) throw new Error('the heap ran out early');
        popped.push(`${entry.due}:${entry.endpointId}:${entry.jobId}:${entry.kind}`);
      }
    };
    push(3_000);
    const firstHalf = expected().slice(0, 1_500);
    pop(1_500);
    expect(popped).toEqual(firstHalf);
    pushed.splice(0, 1_500);
    popped.length = 0;
    push(2_000);
    expect(heap.size).toBe(3_500);
    expect(heap.peek()?.jobId).toBe(expected()[0]?.split(':')[2]);
    pop(3_500);
    expect(popped).toEqual(expected());
    expect(heap.pop()).toBeUndefined();
    expect(heap.peek()).toBeUndefined();
  });

  it('starts afresh after clear, the same endpoint and job ids welcome again', () => {
    const heap = new DueHeap();
    for (let i = 0; i < 2_000; i++) heap.push(i, `ep-${i % 2}`, `j${i}`, 'ttl');
    heap.clear();
    expect(heap.size).toBe(0);
    heap.push(5, 'ep-1', 'j1', 'retention');
    heap.push(5, 'ep-0', 'j0', 'execution');
    expect(heap.pop()).toMatchObject({ due: 5, endpointId: 'ep-1', jobId: 'j1', kind: 'retention' });
    expect(heap.pop()).toMatchObject({ due: 5, endpointId: 'ep-0', jobId: 'j0', kind: 'execution' });
  });
});

describe('DueHeap.refill', () => {
  it('holds only what the fill added, in due order, ties in the order added, and takes pushes after it', () => {
    const heap = new DueHeap();
    heap.push(1, 'ep', 'dropped', 'ttl');
    const dues: number[] = [];
    heap.refill((add) => {
      for (let i = 0; i < 4_000; i++) {
        const due = (i * 7_919) % 997;
        dues.push(due);
        add(due, `ep-${i % 2}`, `r${i}`, i % 2 === 0 ? 'retention' : 'ttl');
      }
    });
    expect(heap.size).toBe(4_000);
    heap.push(-1, 'ep', 'first', 'execution');
    heap.push(996, 'ep', 'last', 'execution');
    const first = heap.pop();
    expect(first).toMatchObject({ due: -1, jobId: 'first', kind: 'execution' });
    const popped: Array<{ due: number; jobId: string }> = [];
    for (let entry = heap.pop(); entry; entry = heap.pop()) popped.push({ due: entry.due, jobId: entry.jobId });
    expect(popped.map((entry) => entry.due)).toEqual([...dues, 996].sort((x, y) => x - y));
    // Ties: the entries the fill added first come first, and the push after the fill comes after them.
    const ties = popped.filter((entry) => entry.due === 996).map((entry) => entry.jobId);
    expect(ties.at(-1)).toBe('last');
    const order = ties.slice(0, -1).map((id) => Number(id.slice(1)));
    expect(order).toEqual([...order].sort((x, y) => x - y));
    expect(popped.some((entry) => entry.jobId === 'dropped')).toBe(false);
  });
});

describe('DueHeap.peek', () => {
  it('answers the top as it is now after each push, pop, refill and clear', () => {
    const heap = new DueHeap();
    expect(heap.peek()).toBeUndefined();
    heap.push(50, 'ep', 'later', 'ttl');
    expect(heap.peek()?.jobId).toBe('later');
    expect(heap.peek()).toBe(heap.peek());
    heap.push(60, 'ep', 'after', 'ttl');
    expect(heap.peek()?.jobId).toBe('later');
    heap.push(10, 'ep', 'sooner', 'execution');
    expect(heap.peek()).toMatchObject({ due: 10, jobId: 'sooner', kind: 'execution' });
    expect(heap.pop()?.jobId).toBe('sooner');
    expect(heap.peek()?.jobId).toBe('later');
    heap.refill((add) => add(5, 'other', 'refilled', 'retention'));
    expect(heap.peek()).toMatchObject({ due: 5, endpointId: 'other', jobId: 'refilled', kind: 'retention' });
    heap.clear();
    expect(heap.peek()).toBeUndefined();
  });
});
