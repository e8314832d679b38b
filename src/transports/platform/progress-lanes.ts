/**
 * @module transports/platform/progress-lanes
 * Progress posts, best effort: one in flight per run, a newer value replacing one still
 * waiting. Lanes are keyed by run (runKey: job id and attempt), so two attempts of one
 * job on one worker (attempt 1 still in a handler that ignored its abort, attempt 2
 * taken after a retry) never replace or drop each other's values: a run's result drops
 * the value waiting in its own lane only. A lane that falls idle is removed, so runs
 * that end without a result (cancelled) leave nothing behind.
 */

interface Lane {
  /** Sequence number of the newest value queued; a waiting value that is not the newest is skipped. */
  latest: number;
  /** Settles when the lane's last queued post has. */
  chain: Promise<void>;
}

export class ProgressLanes {
  readonly #lanes = new Map<string, Lane>();
  #closed = false;

  /** Lanes with a post in flight or waiting. */
  get size(): number {
    return this.#lanes.size;
  }

  /**
   * Queue `send` in the lane of `key`: it runs once the post in flight there has
   * settled, unless a newer value, drop() or close() comes first (then it resolves
   * without sending). Rejects when `send` does.
   */
  post(key: string, send: () => Promise<void>): Promise<void> {
    if (this.#closed) return Promise.resolve();
    let lane = this.#lanes.get(key);
    if (!lane) {
      lane = { latest: 0, chain: Promise.resolve() };
      this.#lanes.set(key, lane);
    }
    const current = lane;
    const seq = ++current.latest;
    const link = current.chain.then(async () => {
      if (seq !== current.latest || this.#closed) return; // superseded by a newer value
      await send();
    });
    current.chain = link
      .catch(() => {})
      .then(() => {
        if (seq === current.latest && this.#lanes.get(key) === current) this.#lanes.delete(key);
      });
    return link;
  }

  /** Skip the value waiting in `key`'s lane (its run posts its result now); a post already in flight still lands. */
  drop(key: string): void {
    const lane = this.#lanes.get(key);
    if (!lane) return;
    lane.latest++;
    this.#lanes.delete(key);
  }

  /** Skip every waiting value, now and later. */
  close(): void {
    this.#closed = true;
    for (const lane of this.#lanes.values()) lane.latest++;
    this.#lanes.clear();
  }
}
