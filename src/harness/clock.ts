/**
 * @module harness/clock
 * Time for the harness, injectable so that tests cover ttl, retention and execution
 * timeouts without waiting. `systemClock` uses Date.now and unref'd timers (a harness
 * never keeps a process alive by its timers alone); `ManualClock` moves only when told.
 */

export interface TimerHandle {
  cancel(): void;
}

export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
  /** Call `callback` once, `delayMs` from now. */
  setTimer(delayMs: number, callback: () => void): TimerHandle;
}

/** Node's timers cap a delay at 2^31-1 ms (about 24.8 days); ours never exceed 7 days. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer(delayMs, callback) {
    const timer = setTimeout(callback, Math.min(Math.max(0, delayMs), MAX_TIMER_MS));
    timer.unref();
    return { cancel: () => clearTimeout(timer) };
  },
};

interface ManualTimer {
  due: number;
  seq: number;
  callback: () => void;
  cancelled: boolean;
}

/** A clock that stands still until `advance` moves it, firing due timers in order. */
export class ManualClock implements Clock {
  #now: number;
  #seq = 0;
  #timers: ManualTimer[] = [];

  constructor(startMs = Date.UTC(2026, 0, 1)) {
    this.#now = startMs;
  }

  now(): number {
    return this.#now;
  }

  setTimer(delayMs: number, callback: () => void): TimerHandle {
    const timer: ManualTimer = { due: this.#now + Math.max(0, delayMs), seq: this.#seq++, callback, cancelled: false };
    this.#timers.push(timer);
    return {
      cancel: () => {
        timer.cancelled = true;
      },
    };
  }

  /** Move time forward by `ms`, firing every timer that falls due, earliest first. */
  advance(ms: number): void {
    const target = this.#now + ms;
    for (;;) {
      this.#timers = this.#timers.filter((t) => !t.cancelled);
      let next: ManualTimer | undefined;
      for (const t of this.#timers) {
        if (t.due <= target && (!next || t.due < next.due || (t.due === next.due && t.seq < next.seq))) next = t;
      }
      if (!next) break;
      this.#now = next.due;
      next.cancelled = true;
      next.callback();
    }
    this.#now = target;
  }

  /** Timers still waiting (for tests). */
  get pendingTimers(): number {
    return this.#timers.filter((t) => !t.cancelled).length;
  }
}
