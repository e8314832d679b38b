/**
 * @module clock/manual-clock
 * A clock for tests: it stands still until `advance` moves it, firing due timers in
 * order, so that a test covers a timeout or a retention without waiting for it.
 */
import type { Clock, TimerHandle } from './clock.js';

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

  /** When the earliest timer still waiting falls due, epoch ms; undefined when none waits (for tests). */
  get nextDueAt(): number | undefined {
    let next: number | undefined;
    for (const t of this.#timers) if (!t.cancelled && (next === undefined || t.due < next)) next = t.due;
    return next;
  }

  /** Timers still waiting (for tests). */
  get pendingTimers(): number {
    return this.#timers.filter((t) => !t.cancelled).length;
  }
}
