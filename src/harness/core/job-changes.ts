/**
 * @module harness/core/job-changes
 * Listeners per job id, called when the job gets a chunk, changes status or is
 * deleted (readers of /stream, /status-sync and /runsync wake up on them). A job's
 * listeners are a HeldList: a removed listener (the request that waited) is let go of at
 * once, even by the map's tables that V8 replaced (collections/held-list.ts).
 */
import type { JobStatus, JobView } from '../../job/index.js';
import { HeldList } from '../../collections/held-list.js';

/** Called on a change of the job: its new status when the change set it, and its view when the change ended it and the store had it in hand. */
export type JobChangeListener = (status?: JobStatus, ended?: JobView) => void;

export class JobChanges {
  readonly #listeners = new Map<string, HeldList<JobChangeListener>>();

  /** Call `listener` on every change of the job (with its new status when the change names it); answers the function that removes it. */
  on(jobId: string, listener: JobChangeListener): () => void {
    let list = this.#listeners.get(jobId);
    if (!list) {
      list = new HeldList();
      this.#listeners.set(jobId, list);
    }
    const held = list;
    const remove = held.add(listener);
    return () => {
      remove();
      if (held.size === 0 && this.#listeners.get(jobId) === held) this.#listeners.delete(jobId);
    };
  }

  /** The job changed (to `status`, when known; `ended`: its view once ended, when known): call its listeners. */
  notify(jobId: string, status?: JobStatus, ended?: JobView): void {
    const listeners = this.#listeners.get(jobId);
    if (!listeners) return;
    for (const listener of listeners.values()) listener(status, ended);
  }

  /** Events may have been missed (a shared store's notifications were cut): call every listener. */
  notifyAll(): void {
    for (const listeners of [...this.#listeners.values()]) for (const listener of listeners.values()) listener();
  }

  /** The job is gone: drop its listeners. */
  forget(jobId: string): void {
    this.#listeners.get(jobId)?.clear();
    this.#listeners.delete(jobId);
  }
}
