/**
 * @module harness/core/take-waiters
 * Workers waiting in a long poll for jobs, served first come first served. A waiter
 * stays first in line while the facade asks the store for its jobs, and leaves the
 * line when it is served, when its signal aborts (it gets []), or at a drain.
 */
import type { Job } from '../../job/index.js';
import { HeldList } from '../../collections/held-list.js';

export interface TakeWaiter {
  readonly workerId: string;
  readonly max: number;
  /** Hand the waiter its jobs (or [] at a drain) and take it out of the line. */
  resolve(jobs: Job[]): void;
  /** Its wait is over (served, or its signal aborted): jobs taken for it now reach no one. */
  readonly settled: boolean;
}

/** How the line is served: the store's take for a waiter, and the give-back of jobs taken for one that left meanwhile. */
export interface TakeSource {
  take(workerId: string, max: number): Promise<Job[]>;
  giveBack(workerId: string, job: Job): Promise<void>;
  /** No job is handed out (a drain). */
  stopped(): boolean;
}

/** Waiters of one worker served by one take at most. */
const MAX_GROUP = 64;

/**
 * The waiters parked on each signal, and that signal's one 'abort' listener: a listener added
 * and removed per take was about 1.5 % of a busy --serve-api process (Node's EventTarget is
 * slow), whose child's standing take parks once per job on the same signal (bench/README,
 * issue 34, third pass). A HeldList, as a take parks and leaves once a job (collections/held-list.ts).
 */
const parkedOn = new WeakMap<AbortSignal, HeldList<() => void>>();

/** Call `onAbort` when `signal` aborts, until the answered function is called. */
function whenAborted(signal: AbortSignal, onAbort: () => void): () => void {
  let parked = parkedOn.get(signal);
  if (parked === undefined) {
    const created = new HeldList<() => void>();
    parked = created;
    parkedOn.set(signal, created);
    signal.addEventListener(
      'abort',
      () => {
        for (const each of created.clear()) each();
      },
      { once: true },
    );
  }
  return parked.add(onAbort);
}

/**
 * A waiter in line: a class, not an object literal with a getter and closures over the
 * park's variables. The literal was about a third of what the local API's process promoted
 * to old space under `/runsync` load (5.4 % of its allocation promoted at 1 client, 3.3 %
 * with this class; at 8 clients 10.1 % against 6.9 %), for less CPU a request (bench/README,
 * "Issue 46: the take waiters as a class").
 */
class ParkedTake implements TakeWaiter {
  settled = false;
  readonly workerId: string;
  readonly max: number;
  readonly #line: TakeWaiter[];
  readonly #answer: (jobs: Job[]) => void;
  #stopListening: (() => void) | undefined;

  constructor(line: TakeWaiter[], workerId: string, max: number, answer: (jobs: Job[]) => void) {
    this.#line = line;
    this.workerId = workerId;
    this.max = max;
    this.#answer = answer;
  }

  /** Call `onAbort` when `signal` aborts, until answered. */
  listen(signal: AbortSignal): void {
    this.#stopListening = whenAborted(signal, this.onAbort);
  }

  resolve(jobs: Job[]): void {
    this.settled = true;
    this.#stopListening?.();
    this.#leave();
    this.#answer(jobs);
  }

  /** Its signal aborted: out of line, answered []. */
  readonly onAbort = (): void => {
    this.settled = true;
    this.#leave();
    this.#answer([]);
  };

  #leave(): void {
    const index = this.#line.indexOf(this);
    if (index >= 0) this.#line.splice(index, 1);
  }
}

export class TakeWaiters {
  readonly #waiters: TakeWaiter[] = [];
  #serving = false;
  #serveAgain = false;

  /** Park a waiter until it is resolved or `signal` aborts (then it gets []). */
  park(workerId: string, max: number, signal: AbortSignal | undefined): Promise<Job[]> {
    if (signal?.aborted) return Promise.resolve([]);
    return new Promise<Job[]>((resolve) => {
      const waiter = new ParkedTake(this.#waiters, workerId, max, resolve);
      if (signal) waiter.listen(signal);
      this.#waiters.push(waiter);
    });
  }

  /** The longest-waiting waiter, still in line. */
  first(): TakeWaiter | undefined {
    return this.#waiters[0];
  }

  /** `first` and the waiters right behind it in line that wait for the same worker (at most MAX_GROUP). */
  #sameWorkerRun(first: TakeWaiter): TakeWaiter[] {
    const run: TakeWaiter[] = [];
    for (const waiter of this.#waiters) {
      if (waiter.workerId !== first.workerId || run.length >= MAX_GROUP) break;
      run.push(waiter);
    }
    return run;
  }

  /** Every waiter, in line order (a copy). */
  all(): TakeWaiter[] {
    return [...this.#waiters];
  }

  get size(): number {
    return this.#waiters.length;
  }

  /**
   * Hand queued jobs to the waiters, longest waiting first, until the store has none left
   * for them. One serving at a time: a call while one runs makes it go round once more.
   */
  serve(source: TakeSource, onError: (error: unknown) => void): void {
    if (this.#serving) {
      this.#serveAgain = true;
      return;
    }
    this.#serving = true;
    const serve = async (): Promise<void> => {
      do {
        this.#serveAgain = false;
        for (let waiter = this.first(); waiter && !source.stopped(); waiter = this.first()) {
          // The waiters of one worker next in line (a worker of concurrency n polls n times)
          // are served by one take: one store statement for their jobs, not one each.
          const group = this.#sameWorkerRun(waiter);
          const jobs = await source.take(
            waiter.workerId,
            group.reduce((sum, each) => sum + each.max, 0),
          );
          if (jobs.length === 0) break;
          let next = 0;
          for (const each of group) {
            if (each.settled || next >= jobs.length) continue;
            each.resolve(jobs.slice(next, next + each.max));
            next += each.max;
          }
          // Waiters that gave up while the store answered (a shared store is slower): their
          // jobs never left this process, so they go back to their place in the queue, not counted as lost.
          for (const job of jobs.slice(next)) await source.giveBack(waiter.workerId, job);
        }
      } while (this.#serveAgain && !source.stopped());
    };
    serve()
      .catch(onError)
      .finally(() => {
        this.#serving = false;
      });
  }
}
