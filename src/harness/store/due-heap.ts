/**
 * @module harness/store/due-heap
 * The deadlines of the in-memory store (ttl, execution timeout, retention) in one
 * binary min-heap, ordered by due time and then by the order they were set. An entry
 * is a hint: the store checks, when it pops one, that the job still has that deadline
 * (a deadline moved by /status?ttl=, cleared by a result, or a job deleted leaves a
 * stale entry behind, dropped when it reaches the top). The store rebuilds the heap
 * from its jobs when stale entries pile up.
 */

/** Which rule a deadline applies. */
export type DueKind = 'ttl' | 'execution' | 'retention';

export interface DueEntry {
  readonly due: number;
  readonly seq: number;
  readonly endpointId: string;
  readonly jobId: string;
  readonly kind: DueKind;
}

function before(a: DueEntry, b: DueEntry): boolean {
  return a.due < b.due || (a.due === b.due && a.seq < b.seq);
}

export class DueHeap {
  #heap: DueEntry[] = [];
  #seq = 0;

  get size(): number {
    return this.#heap.length;
  }

  push(due: number, endpointId: string, jobId: string, kind: DueKind): void {
    const entry: DueEntry = { due, seq: this.#seq++, endpointId, jobId, kind };
    const heap = this.#heap;
    let i = heap.push(entry) - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const p = heap[parent] as DueEntry;
      if (!before(entry, p)) break;
      heap[i] = p;
      i = parent;
    }
    heap[i] = entry;
  }

  peek(): DueEntry | undefined {
    return this.#heap[0];
  }

  pop(): DueEntry | undefined {
    const heap = this.#heap;
    const top = heap[0];
    const last = heap.pop();
    if (top === undefined || last === undefined || heap.length === 0) return top;
    let i = 0;
    const n = heap.length;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= n) break;
      const right = left + 1;
      const child = right < n && before(heap[right] as DueEntry, heap[left] as DueEntry) ? right : left;
      if (!before(heap[child] as DueEntry, last)) break;
      heap[i] = heap[child] as DueEntry;
      i = child;
    }
    heap[i] = last;
    return top;
  }

  clear(): void {
    this.#heap = [];
  }
}
