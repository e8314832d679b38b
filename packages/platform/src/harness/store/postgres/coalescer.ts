/**
 * @module harness/store/postgres/coalescer
 * Concurrent calls of one kind joined into one statement. Calls made in one turn of the
 * event loop go together once the turn is over (setImmediate: no time is waited), and
 * calls made while a statement is in flight wait for it and then go together in the next
 * one (up to a count and a size), so under load the database sees one statement, one
 * commit and one flush for many calls, and an idle store answers as fast as before. The
 * next one starts once the turn of the answer is over too: its callers' next calls, made
 * a few awaits after their answers, join it (taken at once, the first of them went alone:
 * 119 of 246 result statements of a drain carried one result).
 * A joined statement that fails is run again one call at a time: each call gets its own
 * answer or its own error, and none is lost or written twice (the statement is one
 * transaction: a failed one wrote nothing).
 * A call given an AbortSignal is withdrawn when it aborts while it waits (never sent: the
 * caller may answer that it was not stored); a failure every call would meet alone
 * (`failsAll`) is everyone's at once.
 * With more than one statement in flight (`inFlight`), calls that name the same key (a
 * job) never run in two statements at once: a call whose key is in flight waits for that
 * statement's answer, so the calls of one key are run in the order they were made.
 */

interface Waiting<I, O> {
  readonly item: I;
  readonly size: number;
  readonly key: string | undefined;
  /** Aborted: the call is withdrawn unless its statement was sent (then its outcome is answered). */
  readonly signal: AbortSignal | undefined;
  readonly resolve: (output: O) => void;
  readonly reject: (error: unknown) => void;
}

export interface CoalescerLimits {
  /** Calls in one statement at most. */
  readonly maxItems: number;
  /** Their sizes (bytes, as the caller counts them) in one statement at most; a single larger call goes alone. */
  readonly maxSize: number;
  /**
   * Statements in flight at once (default 1). With 2, calls made while one is in flight go in
   * a second one at once (after the turn) instead of waiting for the first's commit: one
   * statement runs while the other's commit is flushed.
   */
  readonly inFlight?: number;
  /**
   * A failure every call of a joined statement would meet again alone (the database cannot
   * be reached): each call gets it at once instead of being run again one at a time, which
   * during an outage held the last calls for seconds and ran some after their callers had
   * given up (issue 49 item 3).
   */
  readonly failsAll?: (error: unknown) => boolean;
}

export class Coalescer<I, O> {
  readonly #run: (items: readonly I[]) => Promise<readonly O[]>;
  readonly #limits: CoalescerLimits;
  #waiting: Waiting<I, O>[] = [];
  /** Drain loops running (each has one statement in flight at a time). */
  #running = 0;
  /** A drain loop is to start after this turn. */
  #starting = false;
  /** The keys of the calls in flight, with their count. */
  readonly #keysInFlight = new Map<string, number>();

  /** `run`: one statement for `items`, answering one output per item, in their order. */
  constructor(run: (items: readonly I[]) => Promise<readonly O[]>, limits: CoalescerLimits) {
    this.#run = run;
    this.#limits = limits;
  }

  /**
   * Run `item` (of `size`) with the calls made meanwhile; answers its own output. Calls of
   * one `key` never run in two statements at once (one statement may hold several).
   */
  add(item: I, size: number, key?: string, signal?: AbortSignal): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      if (signal?.aborted === true) {
        reject(signal.reason);
        return;
      }
      const waiting: Waiting<I, O> = { item, size, key, signal, resolve, reject };
      this.#waiting.push(waiting);
      // Withdrawn while it waits for a statement: never sent, so never written; once in a statement, that statement's outcome is its answer.
      signal?.addEventListener(
        'abort',
        () => {
          const at = this.#waiting.indexOf(waiting);
          if (at < 0) return;
          this.#waiting.splice(at, 1);
          reject(signal.reason);
        },
        { once: true },
      );
      if (!this.#starting && this.#running < (this.#limits.inFlight ?? 1)) {
        this.#starting = true;
        this.#running++;
        setImmediate(() => {
          this.#starting = false;
          void this.#drain();
        });
      }
    });
  }

  async #drain(): Promise<void> {
    try {
      // A loop ends when nothing it may run is left: the calls of a key in flight are taken by the loop that holds that key, once it is answered.
      for (let batch = this.#nextBatch(); batch.length > 0; batch = this.#nextBatch()) {
        this.#hold(batch, 1);
        try {
          await this.#runBatch(batch);
        } finally {
          this.#hold(batch, -1);
        }
        await afterThisTurn();
      }
    } finally {
      this.#running--;
    }
  }

  #hold(batch: readonly Waiting<I, O>[], by: 1 | -1): void {
    for (const { key } of batch) {
      if (key === undefined) continue;
      const count = (this.#keysInFlight.get(key) ?? 0) + by;
      if (count > 0) this.#keysInFlight.set(key, count);
      else this.#keysInFlight.delete(key);
    }
  }

  /** The next calls in their order, within the limits, passing over those whose key is in flight. */
  #nextBatch(): Waiting<I, O>[] {
    let size = 0;
    let taken = 0;
    const batch: Waiting<I, O>[] = [];
    const left: Waiting<I, O>[] = [];
    for (const waiting of this.#waiting) {
      if (batch.length > 0 && (batch.length >= this.#limits.maxItems || size + waiting.size > this.#limits.maxSize)) break;
      taken++;
      if (waiting.key !== undefined && this.#keysInFlight.has(waiting.key)) left.push(waiting);
      else {
        size += waiting.size;
        batch.push(waiting);
      }
    }
    this.#waiting = taken === this.#waiting.length ? left : [...left, ...this.#waiting.slice(taken)];
    return batch;
  }

  async #runBatch(batch: readonly Waiting<I, O>[]): Promise<void> {
    let outputs: readonly O[];
    try {
      outputs = await this.#run(batch.map((waiting) => waiting.item));
    } catch (error) {
      if (batch.length === 1 || this.#limits.failsAll?.(error) === true) {
        for (const waiting of batch) waiting.reject(error);
        return;
      }
      // One call's fault must not be every call's: each alone, in its order.
      for (const waiting of batch) {
        // A call withdrawn meanwhile is not run again (the failed statement wrote nothing).
        if (waiting.signal?.aborted === true) waiting.reject(waiting.signal.reason);
        else await this.#runBatch([waiting]);
      }
      return;
    }
    // It committed: an answer that does not match is reported, never run again.
    const mismatch = outputs.length === batch.length ? undefined : new Error(`A joined statement answered ${outputs.length} rows for ${batch.length} calls`);
    batch.forEach((waiting, index) => (mismatch ? waiting.reject(mismatch) : waiting.resolve(outputs[index] as O)));
  }
}

/** Resolves once the current turn of the event loop is over (its I/O callbacks and their microtasks run). */
function afterThisTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
