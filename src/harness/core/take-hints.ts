/**
 * @module harness/core/take-hints
 * Wake-ups put off for jobs another process will most likely take. With several harness
 * processes on one store, each job's 'queued' event wakes the waiting takers of every
 * process, and all but the one that gets the job run a take that finds nothing (a
 * statement per job for nothing). A submit that knew a taker of its own process was
 * waiting says so (StoreEvent 'queued', takerWaitingFor): that process takes the job at
 * once. Here the wake-up such an event brings is put off for a moment (GRACE_MS), and
 * dropped when the job's take is told first (a 'changed' event to IN_PROGRESS, from any
 * process). A hint that was wrong (the taker gave up, or took an older job) costs the
 * moment, never the job: the wake-up comes when it ends.
 */
import type { Clock, TimerHandle } from '../../clock/index.js';

/** How long a hinted job's wake-up waits for its take to be told, ms. */
export const GRACE_MS = 50;

export class TakeHints {
  readonly #clock: Clock;
  readonly #wake: () => void;
  readonly #pending = new Map<string, TimerHandle>();

  /** `wake`: what the 'queued' event would have done (serve the waiting takers). */
  constructor(clock: Clock, wake: () => void) {
    this.#clock = clock;
    this.#wake = wake;
  }

  /** Another process queued `jobId` with a taker of its own waiting: wake in a moment unless its take is told first. */
  hinted(jobId: string): void {
    if (this.#pending.has(jobId)) return;
    const timer = this.#clock.setTimer(GRACE_MS, () => {
      this.#pending.delete(jobId);
      this.#wake();
    });
    this.#pending.set(jobId, timer);
  }

  /** The job was taken (by any process): its wake-up is not needed. */
  taken(jobId: string): void {
    const timer = this.#pending.get(jobId);
    if (timer === undefined) return;
    timer.cancel();
    this.#pending.delete(jobId);
  }

  /** Wake now for every hint still waiting (events may have been missed: the takers look again anyway). */
  flush(): void {
    if (this.#pending.size === 0) return;
    for (const timer of this.#pending.values()) timer.cancel();
    this.#pending.clear();
    this.#wake();
  }
}
