/**
 * @module harness/core/take-waiters
 * Workers waiting in a long poll for jobs, served first come first served. A waiter
 * stays first in line while the facade asks the store for its jobs, and leaves the
 * line when it is served, when its signal aborts (it gets []), or at a drain.
 */
import type { Job } from '../../job/index.js';

export interface TakeWaiter {
  readonly workerId: string;
  readonly max: number;
  /** Hand the waiter its jobs (or [] at a drain) and take it out of the line. */
  resolve(jobs: Job[]): void;
  /** Its wait is over (served, or its signal aborted): jobs taken for it now reach no one. */
  readonly settled: boolean;
}

export class TakeWaiters {
  readonly #waiters: TakeWaiter[] = [];

  /** Park a waiter until it is resolved or `signal` aborts (then it gets []). */
  park(workerId: string, max: number, signal: AbortSignal | undefined): Promise<Job[]> {
    return new Promise<Job[]>((resolve) => {
      if (signal?.aborted) {
        resolve([]);
        return;
      }
      const leave = (): void => {
        const index = this.#waiters.indexOf(waiter);
        if (index >= 0) this.#waiters.splice(index, 1);
      };
      let settled = false;
      const onAbort = (): void => {
        settled = true;
        leave();
        resolve([]);
      };
      const waiter: TakeWaiter = {
        workerId,
        max,
        resolve: (jobs) => {
          settled = true;
          signal?.removeEventListener('abort', onAbort);
          leave();
          resolve(jobs);
        },
        get settled() {
          return settled;
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#waiters.push(waiter);
    });
  }

  /** The longest-waiting waiter, still in line. */
  first(): TakeWaiter | undefined {
    return this.#waiters[0];
  }

  /** Every waiter, in line order (a copy). */
  all(): TakeWaiter[] {
    return [...this.#waiters];
  }

  get size(): number {
    return this.#waiters.length;
  }
}
