/**
 * @module harness/store/due-heap
 * The deadlines of the in-memory store (ttl, execution timeout, retention) in one
 * binary min-heap, ordered by due time and then by the order they were set. An entry
 * is a hint: the store checks, when it pops one, that the job still has that deadline
 * (a deadline moved by /status?ttl=, cleared by a result, or a job deleted leaves a
 * stale entry behind, dropped when it reaches the top). The store rebuilds the heap
 * from its jobs when stale entries pile up.
 *
 * The heap holds two or three entries for every job the store keeps, finished jobs
 * included (a /runsync job is kept a minute, a /run job 30): hundreds of thousands
 * under load. So an entry is not an object: each field lives in an array of its own
 * (the due time and the order in typed arrays, the endpoint as an index into the
 * names seen, the job id as the job's own string). That is about 30 bytes an entry
 * where an entry object and its boxed due time took about 90, and the collector has
 * one string to visit per entry instead of an object and a number (bench/README,
 * issue 46 item 3). `pop` answers a new DueEntry; `peek` answers the same one until the
 * top changes (the scheduler peeks after every change of a job).
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

const KINDS: readonly DueKind[] = ['ttl', 'execution', 'retention'];
const KIND_CODES: Readonly<Record<DueKind, number>> = { ttl: 0, execution: 1, retention: 2 };
/** Slots the typed arrays start with, and never shrink below. */
const INITIAL_CAPACITY = 1_024;

export class DueHeap {
  #dues = new Float64Array(INITIAL_CAPACITY);
  /** The order entries were pushed in (a double: it never wraps in a process's life). */
  #seqs = new Float64Array(INITIAL_CAPACITY);
  #kinds = new Uint8Array(INITIAL_CAPACITY);
  /** Index into #endpointNames. */
  #endpoints = new Uint32Array(INITIAL_CAPACITY);
  #jobIds: string[] = [];
  #size = 0;
  #seq = 0;
  /** Endpoint ids seen, by index (a handful: kept for the heap's life, cleared with it). */
  #endpointNames: string[] = [];
  readonly #endpointIndex = new Map<string, number>();
  /** The top entry as `peek` last answered it; cleared whenever slot 0 is written or the heap empties. */
  #top: DueEntry | undefined;

  get size(): number {
    return this.#size;
  }

  push(due: number, endpointId: string, jobId: string, kind: DueKind): void {
    if (this.#size === this.#dues.length) this.#resize(this.#dues.length * 2);
    const seq = this.#seq++;
    const endpoint = this.#endpointCode(endpointId);
    const code = KIND_CODES[kind];
    let i = this.#size++;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (this.#precedes(parent, due, seq)) break;
      this.#move(parent, i);
      i = parent;
    }
    this.#set(i, due, seq, code, endpoint, jobId);
  }

  /**
   * Empty the heap and fill it again with what `fill` adds, in that order for ties: the
   * entries go in unsorted and are put in heap order once, bottom-up (O(n), where pushing
   * them one by one sorts each on its way in).
   */
  refill(fill: (add: (due: number, endpointId: string, jobId: string, kind: DueKind) => void) => void): void {
    this.clear();
    fill((due, endpointId, jobId, kind) => {
      if (this.#size === this.#dues.length) this.#resize(this.#dues.length * 2);
      this.#set(this.#size++, due, this.#seq++, KIND_CODES[kind], this.#endpointCode(endpointId), jobId);
    });
    for (let i = (this.#size >> 1) - 1; i >= 0; i--) this.#siftDown(i, this.#size);
  }

  peek(): DueEntry | undefined {
    if (this.#size === 0) return undefined;
    this.#top ??= this.#entry(0);
    return this.#top;
  }

  pop(): DueEntry | undefined {
    if (this.#size === 0) return undefined;
    const top = this.#top ?? this.#entry(0);
    this.#top = undefined;
    const last = --this.#size;
    if (last > 0) {
      this.#move(last, 0);
      this.#siftDown(0, last);
    }
    this.#jobIds.length = last;
    if (this.#dues.length > INITIAL_CAPACITY && last < this.#dues.length >> 2) this.#resize(this.#dues.length >> 1);
    return top;
  }

  clear(): void {
    this.#size = 0;
    this.#top = undefined;
    this.#jobIds = [];
    this.#endpointNames = [];
    this.#endpointIndex.clear();
    if (this.#dues.length > INITIAL_CAPACITY) this.#resize(INITIAL_CAPACITY);
  }

  /** Move the entry at `i` down to its place among the first `size` entries. */
  #siftDown(i: number, size: number): void {
    const due = this.#dues[i] as number;
    const seq = this.#seqs[i] as number;
    const code = this.#kinds[i] as number;
    const endpoint = this.#endpoints[i] as number;
    const jobId = this.#jobIds[i] as string;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= size) break;
      const right = left + 1;
      const child = right < size && this.#precedes(right, this.#dues[left] as number, this.#seqs[left] as number) ? right : left;
      if (!this.#precedes(child, due, seq)) break;
      this.#move(child, i);
      i = child;
    }
    this.#set(i, due, seq, code, endpoint, jobId);
  }

  /** Whether the entry at `i` comes before one due at `due` pushed `seq`-th: the earlier due time, ties in the order pushed. */
  #precedes(i: number, due: number, seq: number): boolean {
    const dueAt = this.#dues[i] as number;
    return dueAt < due || (dueAt === due && (this.#seqs[i] as number) < seq);
  }

  #entry(i: number): DueEntry {
    return {
      due: this.#dues[i] as number,
      seq: this.#seqs[i] as number,
      endpointId: this.#endpointNames[this.#endpoints[i] as number] as string,
      jobId: this.#jobIds[i] as string,
      kind: KINDS[this.#kinds[i] as number] as DueKind,
    };
  }

  #move(from: number, to: number): void {
    this.#set(
      to,
      this.#dues[from] as number,
      this.#seqs[from] as number,
      this.#kinds[from] as number,
      this.#endpoints[from] as number,
      this.#jobIds[from] as string,
    );
  }

  #set(i: number, due: number, seq: number, kind: number, endpoint: number, jobId: string): void {
    if (i === 0) this.#top = undefined;
    this.#dues[i] = due;
    this.#seqs[i] = seq;
    this.#kinds[i] = kind;
    this.#endpoints[i] = endpoint;
    this.#jobIds[i] = jobId;
  }

  #endpointCode(endpointId: string): number {
    let code = this.#endpointIndex.get(endpointId);
    if (code === undefined) {
      code = this.#endpointNames.push(endpointId) - 1;
      this.#endpointIndex.set(endpointId, code);
    }
    return code;
  }

  #resize(capacity: number): void {
    const size = this.#size;
    const dues = new Float64Array(capacity);
    dues.set(this.#dues.subarray(0, size));
    const seqs = new Float64Array(capacity);
    seqs.set(this.#seqs.subarray(0, size));
    const kinds = new Uint8Array(capacity);
    kinds.set(this.#kinds.subarray(0, size));
    const endpoints = new Uint32Array(capacity);
    endpoints.set(this.#endpoints.subarray(0, size));
    this.#dues = dues;
    this.#seqs = seqs;
    this.#kinds = kinds;
    this.#endpoints = endpoints;
  }
}
