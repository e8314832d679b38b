/**
 * @module harness/store/memory-endpoint
 * One endpoint's share of the in-memory store: its jobs (in submission order, with an
 * append-only list for newest-first pages), its queue (arrival order), counters per
 * state and since creation, and its workers. Every status change goes through
 * `setStatus` so that the per-state counts stay exact without a walk.
 */
import { JOB_STATUSES, type JobStatus } from '../../job/index.js';
import { hasHistoryFilter, inOrder, matchesHistory } from './history-filter.js';
import type { EndpointSettings, HealthCounts, ListPage, ListQuery, StateCounts, StoredJob } from './job-store.js';
import { snapshotJob, type MemoryJob, type MemoryWorker } from './memory-records.js';
import { noteJobDeleted, noteRequestBytesReleased } from './released-bytes.js';

/** Rebuild the newest-first list once it holds this many deleted jobs and they are over half of it. */
const COMPACT_AT = 1_024;
/**
 * ...or once the deleted jobs it still holds took this many request bytes: a deleted job
 * there keeps its request alive, and 13 purged bodies of 10 MB stayed in the heap (130 MB)
 * until a thousand more jobs were deleted (issue 49 item 4).
 */
export const COMPACT_AT_BYTES = 8 * 1024 * 1024;

/**
 * Queued jobs in arrival order (a Map keeps insertion order and deletes in O(1)), with
 * the bytes of their requests as received: what the harness's --max-queued-bytes caps.
 */
export class JobQueue extends Map<string, MemoryJob> {
  #bytes = 0;

  get bytes(): number {
    return this.#bytes;
  }

  override set(id: string, job: MemoryJob): this {
    const before = this.get(id);
    if (before !== undefined) this.#bytes -= before.requestBytes;
    this.#bytes += job.requestBytes;
    return super.set(id, job);
  }

  override delete(id: string): boolean {
    const job = this.get(id);
    if (job !== undefined) this.#bytes -= job.requestBytes;
    return super.delete(id);
  }

  override clear(): void {
    this.#bytes = 0;
    super.clear();
  }
}

export class MemoryEndpoint {
  readonly id: string;
  settings: EndpointSettings;
  readonly jobs = new Map<string, MemoryJob>();
  /** Queued jobs in arrival order, with the bytes of their requests. */
  readonly queue = new JobQueue();
  readonly workers = new Map<string, MemoryWorker>();
  readonly counters = { completed: 0, failed: 0, retried: 0 };
  readonly #byStatus = new Map<JobStatus, number>(JOB_STATUSES.map((status) => [status, 0]));
  /** Jobs in submission order, deleted ones included until a compaction. */
  #order: MemoryJob[] = [];
  #deletedInOrder = 0;
  /** Request bytes of the deleted jobs #order still holds. */
  #deletedBytes = 0;

  constructor(id: string, settings: EndpointSettings) {
    this.id = id;
    this.settings = settings;
  }

  add(job: MemoryJob): void {
    this.jobs.set(job.id, job);
    this.#order.push(job);
    this.#byStatus.set(job.status, (this.#byStatus.get(job.status) ?? 0) + 1);
  }

  setStatus(job: MemoryJob, status: JobStatus): void {
    this.#byStatus.set(job.status, (this.#byStatus.get(job.status) ?? 0) - 1);
    job.status = status;
    this.#byStatus.set(status, (this.#byStatus.get(status) ?? 0) + 1);
  }

  /** Forget the job; answers whether it was there. */
  remove(job: MemoryJob): boolean {
    if (this.jobs.get(job.id) !== job) return false;
    this.jobs.delete(job.id);
    this.queue.delete(job.id);
    this.release(job);
    this.#byStatus.set(job.status, (this.#byStatus.get(job.status) ?? 0) - 1);
    this.#deletedInOrder++;
    this.#deletedBytes += job.requestBytes;
    noteJobDeleted();
    if ((this.#deletedInOrder >= COMPACT_AT && this.#deletedInOrder * 2 > this.#order.length) || this.#deletedBytes >= COMPACT_AT_BYTES) {
      this.#order = this.#order.filter((kept) => this.jobs.get(kept.id) === kept);
      const released = this.#deletedBytes;
      const jobs = this.#deletedInOrder;
      this.#deletedInOrder = 0;
      this.#deletedBytes = 0;
      // Only now are the deleted jobs and their requests unreachable (the list held them).
      noteRequestBytesReleased(released, jobs);
    }
    return true;
  }

  /** The worker no longer holds the job. */
  release(job: MemoryJob): void {
    if (job.workerId !== undefined) this.workers.get(job.workerId)?.jobIds.delete(job.id);
    job.workerId = undefined;
  }

  /** Put `job` back in the queue at its place by queuedAt (before the first job queued after it). */
  returnToQueue(job: MemoryJob): void {
    const queued = [...this.queue.values()];
    const at = queued.findIndex((other) => other.queuedAt > job.queuedAt);
    if (at < 0) {
      this.queue.set(job.id, job);
      return;
    }
    this.queue.clear();
    for (const other of [...queued.slice(0, at), job, ...queued.slice(at)]) this.queue.set(other.id, other);
  }

  count(status: JobStatus): number {
    return this.#byStatus.get(status) ?? 0;
  }

  stateCounts(): StateCounts {
    const counts = { retained: this.jobs.size } as Record<JobStatus | 'retained', number>;
    for (const status of JOB_STATUSES) counts[status] = this.count(status);
    return counts;
  }

  /** Jobs kept, newest submission first. */
  *newestFirst(): Generator<MemoryJob> {
    for (let i = this.#order.length - 1; i >= 0; i--) {
      const job = this.#order[i] as MemoryJob;
      if (this.jobs.get(job.id) === job) yield job;
    }
  }

  /** A page of jobs, newest first. Without a search the total is the per-state counters' sum and only the page is walked. */
  page(query: ListQuery): ListPage {
    const wanted = query.states && query.states.length > 0 ? new Set(query.states) : undefined;
    const typed = query.search?.trim();
    const search = typed ? typed.toLowerCase() : undefined;
    const exact = typed ? (this.jobs.get(typed) ?? this.jobs.get(search ?? '')) : undefined;
    const page: StoredJob[] = [];
    const history = hasHistoryFilter(query);
    if (exact) {
      const matches = (!wanted || wanted.has(exact.status)) && (!history || matchesHistory(exact, query));
      if (matches && query.offset === 0 && query.limit > 0) page.push(snapshotJob(exact));
      return { total: matches ? 1 : 0, jobs: page };
    }
    // Counted by walking when a filter beyond the state is asked for; else the counters give the total.
    const walked = search !== undefined || history;
    let total = walked ? 0 : [...(wanted ?? JOB_STATUSES)].reduce((sum, status) => sum + this.count(status), 0);
    let seen = 0;
    for (const job of query.order === undefined || query.order === 'newest' ? this.newestFirst() : inOrder([...this.newestFirst()], query.order)) {
      if (wanted && !wanted.has(job.status)) continue;
      // Ids are mostly lower-case UUIDs: the plain test first, the lower-cased copy only when it fails.
      if (search !== undefined && !job.id.includes(search) && !job.id.toLowerCase().includes(search)) continue;
      if (history && !matchesHistory(job, query)) continue;
      if (seen >= query.offset && page.length < query.limit) page.push(snapshotJob(job));
      seen++;
      if (walked) total = seen;
      else if (page.length >= query.limit) break;
    }
    return { total, jobs: page };
  }

  /** /health: counters since creation, jobs running and queued now, idle and running workers (initializing ones left out). */
  health(): HealthCounts {
    let idle = 0;
    let running = 0;
    for (const worker of this.workers.values()) {
      if (worker.jobIds.size > 0) running++;
      else if (!worker.initializing) idle++;
    }
    return { jobs: { ...this.counters, inProgress: this.count('IN_PROGRESS'), inQueue: this.queue.size }, workers: { idle, running } };
  }

  touchWorker(workerId: string, now: number): MemoryWorker {
    let worker = this.workers.get(workerId);
    if (!worker) {
      worker = { id: workerId, endpointId: this.id, firstSeenAt: now, lastSeenAt: now, jobIds: new Set(), initializing: false, heartbeats: false };
      this.workers.set(workerId, worker);
    } else {
      worker.lastSeenAt = now;
    }
    return worker;
  }
}
