/**
 * @module worker/slot-waiters
 * What waits for a concurrency slot to free (the take loop, the drain): a promise each,
 * all woken together. A wake-up asked for during a turn of the event loop comes after
 * it, once: the runs that end or settle in the same turn free their slots first, and one
 * take asks for all (at concurrency 64 a take a job was a third of the worker's HTTP requests).
 */
import { afterThisTurn, type TurnHandle } from './after-this-turn.js';

export class SlotWaiters {
  #waiters: Array<() => void> = [];
  /** The wake-up queued for after this turn. */
  #wake: TurnHandle | undefined;

  /** Resolves at the next wake-up. */
  next(): Promise<void> {
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  /** Wake every waiter now. */
  wake(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const wake of waiters) wake();
  }

  /** Wake every waiter after this turn (once, however often asked during it). */
  wakeAfterThisTurn(): void {
    if (this.#wake !== undefined) return;
    this.#wake = afterThisTurn(() => {
      this.#wake = undefined;
      this.wake();
    });
  }
}
