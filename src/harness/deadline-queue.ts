/**
 * @module harness/deadline-queue
 * The job timers of one endpoint (execution timeout, ttl, retention) on a single clock
 * timer: a binary min-heap of deadlines, ordered by due time and then by the order
 * they were set, with one timer of the injected Clock armed for the earliest. A
 * finished job waits out its retention and its ttl, so a harness holding 100 000
 * finished jobs held 200 000 Node timers, each a Timeout object, a callback closure
 * and a cancel closure; a deadline here is one small object and no closure.
 *
 * Cancelling marks a deadline; marked ones are dropped when they reach the top, or all
 * at once when they are more than half of the heap.
 */
import type { Clock, TimerHandle } from './clock.js';

/** One deadline; `cancel()` is its TimerHandle. */
class Deadline<T, K extends string> implements TimerHandle {
  readonly due: number;
  readonly seq: number;
  item: T | undefined;
  readonly tag: K;
  readonly #queue: DeadlineQueue<T, K>;

  constructor(queue: DeadlineQueue<T, K>, due: number, seq: number, item: T, tag: K) {
    this.#queue = queue;
    this.due = due;
    this.seq = seq;
    this.item = item;
    this.tag = tag;
  }

  /** Stop this deadline from firing; a no-op once it fired or was cancelled. */
  cancel(): void {
    if (this.item === undefined) return;
    this.item = undefined;
    this.#queue.noteCancelled();
  }
}

function before<T, K extends string>(a: Deadline<T, K>, b: Deadline<T, K>): boolean {
  return a.due < b.due || (a.due === b.due && a.seq < b.seq);
}

/** Drop marked deadlines in bulk once there are at least this many (and they are over half the heap). */
const COMPACT_AT = 64;

export class DeadlineQueue<T, K extends string = string> {
  readonly #clock: Clock;
  readonly #onDue: (item: T, tag: K) => void;
  #heap: Array<Deadline<T, K>> = [];
  #seq = 0;
  #cancelled = 0;
  #timer: TimerHandle | undefined;
  #timerDue = Number.POSITIVE_INFINITY;
  #firing = false;

  /** `onDue(item, tag)` is called once per deadline that falls due, in due order. */
  constructor(clock: Clock, onDue: (item: T, tag: K) => void) {
    this.#clock = clock;
    this.#onDue = onDue;
  }

  /** Call `onDue(item, tag)` once, `delayMs` from now (at once for 0 or less), unless cancelled first. */
  schedule(delayMs: number, item: T, tag: K): TimerHandle {
    const deadline = new Deadline(this, this.#clock.now() + Math.max(0, delayMs), this.#seq++, item, tag);
    this.#push(deadline);
    if (!this.#firing && deadline.due < this.#timerDue) this.#arm();
    return deadline;
  }

  /** Deadlines still to fire. */
  get size(): number {
    return this.#heap.length - this.#cancelled;
  }

  /** Drop every deadline and the clock timer (the queue stays usable). */
  clear(): void {
    for (const deadline of this.#heap) deadline.item = undefined;
    this.#heap = [];
    this.#cancelled = 0;
    this.#disarm();
  }

  /** @internal Called by a deadline's cancel(). */
  noteCancelled(): void {
    this.#cancelled++;
    if (this.#cancelled >= COMPACT_AT && this.#cancelled * 2 > this.#heap.length) this.#compact();
  }

  #fire(): void {
    this.#timer = undefined;
    this.#timerDue = Number.POSITIVE_INFINITY;
    this.#firing = true;
    try {
      const now = this.#clock.now();
      for (let top = this.#heap[0]; top !== undefined && top.due <= now; top = this.#heap[0]) {
        this.#pop();
        const item = top.item;
        if (item === undefined) {
          this.#cancelled--;
          continue;
        }
        top.item = undefined; // fired: a later cancel() is a no-op
        this.#onDue(item, top.tag);
      }
    } finally {
      this.#firing = false;
      this.#arm();
    }
  }

  /** Arm the clock timer for the earliest deadline still to fire. */
  #arm(): void {
    while (this.#heap[0] !== undefined && this.#heap[0].item === undefined) {
      this.#pop();
      this.#cancelled--;
    }
    const top = this.#heap[0];
    if (top === undefined) {
      this.#disarm();
      return;
    }
    if (this.#timer !== undefined && this.#timerDue <= top.due) return;
    this.#disarm();
    this.#timerDue = top.due;
    this.#timer = this.#clock.setTimer(top.due - this.#clock.now(), () => this.#fire());
  }

  #disarm(): void {
    this.#timer?.cancel();
    this.#timer = undefined;
    this.#timerDue = Number.POSITIVE_INFINITY;
  }

  #compact(): void {
    const live = this.#heap.filter((deadline) => deadline.item !== undefined);
    this.#heap = [];
    this.#cancelled = 0;
    for (const deadline of live) this.#push(deadline);
  }

  #push(deadline: Deadline<T, K>): void {
    const heap = this.#heap;
    let i = heap.push(deadline) - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const p = heap[parent] as Deadline<T, K>;
      if (!before(deadline, p)) break;
      heap[i] = p;
      i = parent;
    }
    heap[i] = deadline;
  }

  #pop(): void {
    const heap = this.#heap;
    const last = heap.pop();
    if (last === undefined || heap.length === 0) return;
    let i = 0;
    const n = heap.length;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= n) break;
      const right = left + 1;
      const child = right < n && before(heap[right] as Deadline<T, K>, heap[left] as Deadline<T, K>) ? right : left;
      if (!before(heap[child] as Deadline<T, K>, last)) break;
      heap[i] = heap[child] as Deadline<T, K>;
      i = child;
    }
    heap[i] = last;
  }
}
