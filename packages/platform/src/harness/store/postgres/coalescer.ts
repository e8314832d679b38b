/**
 * @module harness/store/postgres/coalescer
 * Concurrent calls of one kind joined into one statement. Calls made in one turn of the
 * event loop go together once the turn is over (setImmediate: no time is waited), and
 * calls made while a statement is in flight wait for it and then go together in the next
 * one (up to a count and a size), so under load the database sees one statement, one
 * commit and one flush for many calls, and an idle store answers as fast as before.
 * A joined statement that fails is run again one call at a time: each call gets its own
 * answer or its own error, and none is lost or written twice (the statement is one
 * transaction: a failed one wrote nothing).
 */

interface Waiting<I, O> {
  readonly item: I;
  readonly size: number;
  readonly resolve: (output: O) => void;
  readonly reject: (error: unknown) => void;
}

export interface CoalescerLimits {
  /** Calls in one statement at most. */
  readonly maxItems: number;
  /** Their sizes (bytes, as the caller counts them) in one statement at most; a single larger call goes alone. */
  readonly maxSize: number;
}

export class Coalescer<I, O> {
  readonly #run: (items: readonly I[]) => Promise<readonly O[]>;
  readonly #limits: CoalescerLimits;
  #waiting: Waiting<I, O>[] = [];
  #running = false;

  /** `run`: one statement for `items`, answering one output per item, in their order. */
  constructor(run: (items: readonly I[]) => Promise<readonly O[]>, limits: CoalescerLimits) {
    this.#run = run;
    this.#limits = limits;
  }

  /** Run `item` (of `size`) with the calls made meanwhile; answers its own output. */
  add(item: I, size: number): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.#waiting.push({ item, size, resolve, reject });
      if (!this.#running) {
        this.#running = true;
        setImmediate(() => void this.#drain());
      }
    });
  }

  async #drain(): Promise<void> {
    try {
      while (this.#waiting.length > 0) await this.#runBatch(this.#nextBatch());
    } finally {
      this.#running = false;
    }
  }

  #nextBatch(): Waiting<I, O>[] {
    let size = 0;
    let count = 0;
    for (const waiting of this.#waiting) {
      if (count > 0 && (count >= this.#limits.maxItems || size + waiting.size > this.#limits.maxSize)) break;
      size += waiting.size;
      count++;
    }
    return this.#waiting.splice(0, count);
  }

  async #runBatch(batch: readonly Waiting<I, O>[]): Promise<void> {
    let outputs: readonly O[];
    try {
      outputs = await this.#run(batch.map((waiting) => waiting.item));
    } catch (error) {
      if (batch.length === 1) {
        batch[0]?.reject(error);
        return;
      }
      // One call's fault must not be every call's: each alone, in its order.
      for (const waiting of batch) await this.#runBatch([waiting]);
      return;
    }
    // It committed: an answer that does not match is reported, never run again.
    const mismatch = outputs.length === batch.length ? undefined : new Error(`A joined statement answered ${outputs.length} rows for ${batch.length} calls`);
    batch.forEach((waiting, index) => (mismatch ? waiting.reject(mismatch) : waiting.resolve(outputs[index] as O)));
  }
}
