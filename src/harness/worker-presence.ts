/**
 * @module harness/worker-presence
 * Which workers the harness has seen, when last, and which jobs each holds: the
 * source of `/health` `workers` and of the jobs to requeue when a worker goes silent.
 */
export interface WorkerPresence {
  readonly id: string;
  firstSeenAt: number;
  lastSeenAt: number;
  readonly jobs: Set<string>;
  /** Ping interval the worker reported or was configured with, ms. */
  pingIntervalMs?: number;
  /** Heard from (its heartbeat) but has not asked for a job yet: its start-up phase (init) runs. */
  initializing?: boolean;
}

export class WorkerPresenceTable {
  readonly #workers = new Map<string, WorkerPresence>();

  /** Record that `workerId` was heard from at `now`. */
  touch(workerId: string, now: number): WorkerPresence {
    let worker = this.#workers.get(workerId);
    if (!worker) {
      worker = { id: workerId, firstSeenAt: now, lastSeenAt: now, jobs: new Set() };
      this.#workers.set(workerId, worker);
    } else {
      worker.lastSeenAt = now;
    }
    return worker;
  }

  get(workerId: string): WorkerPresence | undefined {
    return this.#workers.get(workerId);
  }

  remove(workerId: string): WorkerPresence | undefined {
    const worker = this.#workers.get(workerId);
    this.#workers.delete(workerId);
    return worker;
  }

  all(): IterableIterator<WorkerPresence> {
    return this.#workers.values();
  }

  /** Workers that can take jobs: idle (none held) and running; initializing ones are left out. */
  counts(): { idle: number; running: number } {
    let idle = 0;
    let running = 0;
    for (const worker of this.#workers.values()) {
      if (worker.jobs.size > 0) running++;
      else if (worker.initializing !== true) idle++;
    }
    return { idle, running };
  }

  /** Workers in their start-up phase (heard from, no job asked for yet). */
  initializingCount(): number {
    let count = 0;
    for (const worker of this.#workers.values()) if (worker.initializing === true && worker.jobs.size === 0) count++;
    return count;
  }

  /** The worker asked for a job (or reported one): its start-up phase is over. */
  markReady(workerId: string): void {
    const worker = this.#workers.get(workerId);
    if (worker) worker.initializing = false;
  }
}
