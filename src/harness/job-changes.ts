/**
 * @module harness/job-changes
 * Listeners per job id, called when the job gets a chunk, changes status or is
 * deleted (readers of /stream, /status-sync and /runsync wake up on them).
 */
export class JobChanges {
  readonly #listeners = new Map<string, Set<() => void>>();

  /** Call `listener` on every change of the job; answers the function that removes it. */
  on(jobId: string, listener: () => void): () => void {
    let set = this.#listeners.get(jobId);
    if (!set) {
      set = new Set();
      this.#listeners.set(jobId, set);
    }
    set.add(listener);
    return () => {
      const current = this.#listeners.get(jobId);
      current?.delete(listener);
      if (current?.size === 0) this.#listeners.delete(jobId);
    };
  }

  /** The job changed: call its listeners. */
  notify(jobId: string): void {
    const listeners = this.#listeners.get(jobId);
    if (!listeners) return;
    for (const listener of [...listeners]) listener();
  }

  /** Events may have been missed (a shared store's notifications were cut): call every listener. */
  notifyAll(): void {
    for (const listeners of [...this.#listeners.values()]) for (const listener of [...listeners]) listener();
  }

  /** The job is gone: drop its listeners. */
  forget(jobId: string): void {
    this.#listeners.delete(jobId);
  }
}
