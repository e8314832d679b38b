/**
 * @module harness/take-waiters
 * Workers waiting in a long poll for jobs, served first come first served.
 */
import type { Job } from '../job/index.js';

export interface TakeWaiter {
  readonly workerId: string;
  readonly max: number;
  resolve(jobs: Job[]): void;
}

export class TakeWaiters {
  readonly #waiters: TakeWaiter[] = [];

  /** Park a waiter until `serve` hands it jobs or `signal` aborts (then it gets []). */
  park(workerId: string, max: number, signal: AbortSignal | undefined): Promise<Job[]> {
    return new Promise<Job[]>((resolve) => {
      const waiter: TakeWaiter = {
        workerId,
        max,
        resolve: (jobs) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(jobs);
        },
      };
      const onAbort = (): void => {
        const index = this.#waiters.indexOf(waiter);
        if (index >= 0) this.#waiters.splice(index, 1);
        resolve([]);
      };
      if (signal?.aborted) {
        resolve([]);
        return;
      }
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#waiters.push(waiter);
    });
  }

  /** The longest-waiting waiter, removed from the line. */
  next(): TakeWaiter | undefined {
    return this.#waiters.shift();
  }

  get size(): number {
    return this.#waiters.length;
  }
}
