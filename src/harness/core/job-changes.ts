/**
 * @module harness/core/job-changes
 * Listeners per job id, called when the job gets a chunk, changes status or is
 * deleted (readers of /stream, /status-sync and /runsync wake up on them).
 */
import type { JobStatus, JobView } from '../../job/index.js';

/** Called on a change of the job: its new status when the change set it, and its view when the change ended it and the store had it in hand. */
export type JobChangeListener = (status?: JobStatus, ended?: JobView) => void;

export class JobChanges {
  readonly #listeners = new Map<string, Set<JobChangeListener>>();

  /** Call `listener` on every change of the job (with its new status when the change names it); answers the function that removes it. */
  on(jobId: string, listener: JobChangeListener): () => void {
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

  /** The job changed (to `status`, when known; `ended`: its view once ended, when known): call its listeners. */
  notify(jobId: string, status?: JobStatus, ended?: JobView): void {
    const listeners = this.#listeners.get(jobId);
    if (!listeners) return;
    for (const listener of [...listeners]) listener(status, ended);
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
