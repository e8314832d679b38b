/**
 * @module worker/posting-runs
 * Runs whose handler has finished while their result is still being posted. Such a run
 * gives its concurrency slot back at once (its post goes on in the background), so that
 * the next job's handler overlaps the platform's answer to this one, up to a bound: at
 * most `bound` posts go on in the background (the runtime passes its concurrency). A run
 * that finishes while that many are pending keeps its slot, as every run did before,
 * and moves to the background as soon as one of them is answered.
 *
 * The run itself stays in the runtime's runs until its post is answered: it is listed
 * in the heartbeat (the platform requeues a job the heartbeat leaves out) and a graceful
 * shutdown waits for it like for a running handler. Only the slot count changes.
 */
export class PostingRuns {
  /** Runs (by run key) posting in the background: their slot is free. */
  readonly #background = new Set<string>();
  /** Runs (by run key) posting while holding their slot: the bound was full when their handler finished. */
  readonly #holding: string[] = [];

  /** Posts going on in the background (slots given back before their result was answered). */
  get size(): number {
    return this.#background.size;
  }

  /**
   * The run's handler has finished and its result is about to be posted. Answers true
   * when its slot is free now (fewer than `bound` posts were pending), false when it
   * keeps the slot until a background post is answered.
   */
  settled(key: string, bound: number): boolean {
    if (this.#background.size < bound) {
      this.#background.add(key);
      return true;
    }
    this.#holding.push(key);
    return false;
  }

  /**
   * The run has ended (its post answered, or there was nothing to post). Runs that held
   * their slot while the bound was full move to the background in its place: their
   * slots are free from now on.
   */
  ended(key: string, bound: number): void {
    if (!this.#background.delete(key)) {
      const at = this.#holding.indexOf(key);
      if (at >= 0) this.#holding.splice(at, 1);
    }
    while (this.#background.size < bound && this.#holding.length > 0) this.#background.add(this.#holding.shift() as string);
  }
}
