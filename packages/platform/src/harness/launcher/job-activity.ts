/**
 * @module harness/launcher/job-activity
 * The job activity of launched workers, from events rather than from what a scaler tick
 * happens to see: the store's 'worker' events (a worker took a job, a job it held ended
 * or went back to the queue) stamp the worker's `lastJobAt`, so that a worker serving a
 * stream of short jobs never looks idle; and each job a launched worker takes has its
 * wait for a worker (startedAt - queuedAt) counted once, at take time, however short
 * the job. A job that ended before its take was looked at (a shared store answers
 * later) is counted from the endpoint's `jobEnded` hook instead; after a 'resync' (events
 * may have been missed) every launched worker of the endpoint counts as active. The store schema is
 * untouched: presence and job reads only.
 */
import type { Clock, EndpointJobs, JobStore, StoredJob, StoreEvent } from 'serverless-worker/internal';
import type { LaunchedWorker } from './launched-worker.js';
import type { JobWait } from './queue-snapshot.js';

export interface JobActivityDeps {
  store: Pick<JobStore, 'subscribe' | 'getWorker' | 'get'>;
  clock: Pick<Clock, 'now'>;
  /** The workers this launcher started for the endpoint, by id. */
  workersOf(endpointId: string): ReadonlyMap<string, LaunchedWorker> | undefined;
  /** A job taken by a launched worker waited `waitMs` in the queue. */
  onWait(endpointId: string, wait: JobWait): void;
  onError(error: unknown): void;
}

/** The last `limit` keys added (a bounded "already counted" set). */
class RecentKeys {
  readonly #keys = new Set<string>();
  constructor(readonly limit: number) {}

  /** Add `key`; answers false when it was there already. */
  add(key: string): boolean {
    if (this.#keys.has(key)) return false;
    this.#keys.add(key);
    if (this.#keys.size > this.limit) this.#keys.delete(this.#keys.values().next().value as string);
    return true;
  }
}

export class JobActivity {
  readonly #deps: JobActivityDeps;
  readonly #counted = new RecentKeys(10_000);
  readonly #watched = new Map<string, { jobs: EndpointJobs; off: () => void }>();
  #unsubscribe: (() => void) | undefined;
  #closed = false;

  constructor(deps: JobActivityDeps) {
    this.#deps = deps;
  }

  start(): void {
    this.#closed = false;
    this.#unsubscribe ??= this.#deps.store.subscribe((event) => this.#onEvent(event));
  }

  /** Count waits of `jobs`'s ended jobs too (once per endpoint facade). */
  watch(jobs: EndpointJobs): void {
    const watched = this.#watched.get(jobs.id);
    if (watched?.jobs === jobs) return;
    watched?.off();
    this.#watched.set(jobs.id, { jobs, off: jobs.jobEnded.add((job) => this.#onEnded(job)) });
  }

  /** Stop following the endpoint's ended jobs (it is gone). */
  unwatch(endpointId: string): void {
    this.#watched.get(endpointId)?.off();
    this.#watched.delete(endpointId);
  }

  close(): void {
    this.#closed = true;
    this.#unsubscribe?.();
    this.#unsubscribe = undefined;
    for (const { off } of this.#watched.values()) off();
    this.#watched.clear();
  }

  #onEvent(event: StoreEvent): void {
    // 'resync': events may have been missed (a shared store's connection came back), so
    // every launched worker of the endpoint counts as active now and its jobs are looked at.
    if (event.type !== 'worker' && event.type !== 'resync') return;
    const workers = this.#deps.workersOf(event.endpointId);
    const touched = event.type === 'worker' ? [workers?.get(event.workerId)] : [...(workers?.values() ?? [])];
    for (const worker of touched) {
      if (!worker) continue;
      worker.lastJobAt = this.#deps.clock.now();
      // A read still in flight when the launcher closes may find the store closed: not an error then.
      this.#countTaken(event.endpointId, worker).catch((error: unknown) => {
        if (!this.#closed) this.#deps.onError(error);
      });
    }
  }

  /** The jobs the worker holds now that it did not at the last look: count each one's wait. */
  async #countTaken(endpointId: string, worker: LaunchedWorker): Promise<void> {
    const presence = await this.#deps.store.getWorker(endpointId, worker.id);
    const held = new Set(presence?.jobIds ?? []);
    const before = worker.heldSeen;
    worker.heldSeen = held;
    for (const jobId of held) {
      if (before.has(jobId)) continue;
      const job = await this.#deps.store.get(endpointId, jobId);
      if (job && job.status === 'IN_PROGRESS' && job.workerId === worker.id) this.#count(job, worker.id);
    }
  }

  #onEnded(job: StoredJob): void {
    const workerId = job.resultFrom?.workerId ?? job.workerId;
    if (workerId === undefined) return;
    const worker = this.#deps.workersOf(job.endpointId)?.get(workerId);
    if (!worker) return;
    worker.lastJobAt = this.#deps.clock.now();
    this.#count(job, workerId);
  }

  #count(job: StoredJob, workerId: string): void {
    if (job.startedAt === undefined || !this.#counted.add(`${job.endpointId}/${job.id}@${job.attempt}`)) return;
    this.#deps.onWait(job.endpointId, { jobId: job.id, workerId, waitMs: Math.max(0, job.startedAt - job.queuedAt) });
  }
}
