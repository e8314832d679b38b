/**
 * @module harness/store/memory-job-store
 * The default job store: every job of one harness process in its memory (lost when
 * the process ends). It does each call's work synchronously, before the answered
 * promise settles, and emits its events synchronously at the end of the call (after
 * the change is complete), so that a listener may call the store again at once; the
 * scheduler reads `peekNextDueAt` to re-arm its clock timer within the same clock tick.
 */
import { newJobId } from './job-id.js';
import { resolvePolicy, type Job, type JobRequest, type JobResult, type StreamChunk } from '../../job/index.js';
import { stampAttempt } from './attempts.js';
import { toDelivery } from './job-record.js';
import type {
  ChangeOutcome,
  DueOutcome,
  EndpointSettings,
  GoneWorker,
  HealthCounts,
  JobStore,
  ListPage,
  ListQuery,
  PostAck,
  RequeueRules,
  ResultAck,
  StateCounts,
  StoreEvent,
  StoredJob,
  StoredWorker,
  StreamRead,
  SubmitOptions,
  TouchWorker,
} from './job-store.js';
import { MemoryEndpoint } from './memory-endpoint.js';
import { newMemoryJob, NO_CHUNKS, owned, ownedRequest, snapshotJob, snapshotWorker, type MemoryJob } from './memory-records.js';
import { MemoryState, newChanges, type Changes } from './memory-state.js';
import { cancelChange, completeChange, expiryStop, giveBackChange, queuedJob, retryChange, timeoutChange } from './job-rules.js';
import { refusedChunk, refusedProgress, refusedResult } from './post-rules.js';

export class MemoryJobStore implements JobStore {
  readonly kind = 'memory';
  readonly #state = new MemoryState();
  readonly #listeners = new Set<(event: StoreEvent) => void>();
  #closed = false;

  // -------------------------------------------------------------- endpoints

  async createEndpoint(endpointId: string, settings?: EndpointSettings): Promise<void> {
    const endpoint = this.#state.endpoints.get(endpointId);
    if (endpoint) {
      if (settings) endpoint.settings = { ...settings };
    } else {
      this.#state.endpoints.set(endpointId, new MemoryEndpoint(endpointId, { ...settings }));
    }
  }

  async deleteEndpoint(endpointId: string): Promise<boolean> {
    return this.#state.endpoints.delete(endpointId);
  }

  async listEndpoints(): Promise<string[]> {
    return [...this.#state.endpoints.keys()].sort();
  }

  async endpointSettings(endpointId: string): Promise<EndpointSettings | undefined> {
    const settings = this.#state.endpoints.get(endpointId)?.settings;
    return settings ? { ...settings } : undefined;
  }

  // -------------------------------------------------------------- submit / take

  queuedBytes(): number {
    let bytes = 0;
    for (const endpoint of this.#state.endpoints.values()) bytes += endpoint.queue.bytes;
    return bytes;
  }

  async submit(endpointId: string, request: JobRequest, options: SubmitOptions, now: number): Promise<StoredJob> {
    this.#open();
    const endpoint = this.#state.endpointOrCreate(endpointId);
    const sync = options.sync ?? false;
    const { unreadChunkCount: _none, ...queued } = queuedJob(
      { id: options.id ?? newJobId(sync), endpointId, request: ownedRequest(request), sync, waitMs: options.waitMs },
      now,
    );
    const job: MemoryJob = newMemoryJob(queued, options.bytes ?? 0);
    endpoint.add(job);
    endpoint.queue.set(job.id, job);
    this.#state.schedule(job, 'ttl', job.expiresAt);
    const changes = newChanges();
    changes.events.push({ type: 'queued', endpointId });
    return this.#finish(changes, snapshotJob(job));
  }

  async take(endpointId: string, workerId: string, max: number, now: number): Promise<Job[]> {
    this.#open();
    const endpoint = this.#state.endpointOrCreate(endpointId);
    const worker = endpoint.touchWorker(workerId, now);
    worker.initializing = false;
    const changes = newChanges();
    const taken: Job[] = [];
    for (const job of endpoint.queue.values()) {
      if (taken.length >= max) break;
      endpoint.queue.delete(job.id);
      this.#state.transition(endpoint, job, 'take');
      job.attempt++;
      job.workerId = workerId;
      job.startedAt = now;
      job.executionTimeoutMs =
        job.request.policy?.executionTimeout ?? endpoint.settings.defaultExecutionTimeoutMs ?? resolvePolicy(job.request.policy).executionTimeout;
      job.executionDeadline = now + job.executionTimeoutMs;
      job.reportedAt = undefined;
      this.#state.schedule(job, 'execution', job.executionDeadline);
      worker.jobIds.add(job.id);
      taken.push(toDelivery(job));
      changes.events.push({ type: 'changed', endpointId, jobId: job.id, status: 'IN_PROGRESS' });
    }
    if (taken.length > 0) changes.events.push({ type: 'worker', endpointId, workerId });
    return this.#finish(changes, taken);
  }

  // -------------------------------------------------------------- while running

  async pushChunk(endpointId: string, jobId: string, workerId: string | undefined, chunk: StreamChunk, attempt: number | undefined): Promise<PostAck> {
    this.#open();
    const job = this.#state.job(endpointId, jobId);
    const refused = refusedChunk(job, workerId, chunk, attempt);
    if (refused || !job) return refused ?? { applied: false, reason: 'not_found' };
    if (job.unread === NO_CHUNKS) job.unread = [];
    job.unread.push(owned(stampAttempt(chunk, job.attempt)));
    job.chunkCount++;
    return this.#finish(this.#state.changed(job), { applied: true });
  }

  async progress(endpointId: string, jobId: string, workerId: string | undefined, output: unknown, attempt: number | undefined): Promise<PostAck> {
    this.#open();
    const job = this.#state.job(endpointId, jobId);
    const refused = refusedProgress(job, workerId, attempt);
    if (refused || !job) return refused ?? { applied: false, reason: 'not_found' };
    job.output = owned(output);
    return this.#finish(this.#state.changed(job), { applied: true });
  }

  async complete(
    endpointId: string,
    jobId: string,
    workerId: string | undefined,
    result: JobResult,
    attempt: number | undefined,
    now: number,
  ): Promise<{ readonly ack: ResultAck } & ChangeOutcome> {
    this.#open();
    const changes = newChanges();
    const job = this.#state.job(endpointId, jobId);
    const answer = (ack: ResultAck) => this.#finish(changes, { ack, ended: changes.ended, stops: changes.stops });
    const refused = refusedResult(job, workerId, attempt);
    if (refused || !job) return answer(refused ?? { applied: false, reason: 'not_found' });
    // The store's copies first: a value that cannot be copied throws here, before the job changes.
    const copied: JobResult = result.kind === 'output' ? { ...result, output: owned(result.output) } : { ...result, error: owned(result.error) };
    this.#state.apply(job, completeChange(job, workerId, copied, now), changes);
    return answer({ applied: true, status: job.status });
  }

  // -------------------------------------------------------------- reading

  async get(endpointId: string, jobId: string): Promise<StoredJob | undefined> {
    const job = this.#state.job(endpointId, jobId);
    return job ? snapshotJob(job) : undefined;
  }

  async readStream(endpointId: string, jobId: string): Promise<StreamRead> {
    const job = this.#state.found(endpointId, jobId);
    const stream = job.unread;
    job.unread = NO_CHUNKS;
    return { status: job.status, stream, attempt: job.attempt, retries: job.retries };
  }

  async peekStream(endpointId: string, jobId: string): Promise<readonly StreamChunk[] | undefined> {
    const job = this.#state.job(endpointId, jobId);
    return job ? [...job.unread] : undefined;
  }

  async list(endpointId: string, query: ListQuery): Promise<ListPage> {
    return this.#state.endpoints.get(endpointId)?.page(query) ?? { total: 0, jobs: [] };
  }

  async stateCounts(endpointId: string): Promise<StateCounts> {
    return (this.#state.endpoints.get(endpointId) ?? new MemoryEndpoint(endpointId, {})).stateCounts();
  }

  async health(endpointId: string): Promise<HealthCounts> {
    return (this.#state.endpoints.get(endpointId) ?? new MemoryEndpoint(endpointId, {})).health();
  }

  // -------------------------------------------------------------- caller operations

  async cancel(endpointId: string, jobId: string, now: number): Promise<{ readonly job: StoredJob } & ChangeOutcome> {
    this.#open();
    const job = this.#state.found(endpointId, jobId);
    const changes = newChanges();
    const change = cancelChange(job, now);
    if (change.kind === 'refused') throw change.error;
    if (change.kind !== 'unchanged') this.#state.apply(job, change, changes);
    return this.#finish(changes, { job: snapshotJob(job), ended: changes.ended, stops: changes.stops });
  }

  async retry(endpointId: string, jobId: string, now: number): Promise<StoredJob> {
    this.#open();
    const job = this.#state.found(endpointId, jobId);
    const change = retryChange(job, now);
    if (change.kind === 'refused') throw change.error;
    const changes = newChanges();
    this.#state.apply(job, change, changes);
    return this.#finish(changes, snapshotJob(job));
  }

  async setTtl(endpointId: string, jobId: string, ttlMs: number, now: number): Promise<StoredJob> {
    this.#open();
    const job = this.#state.found(endpointId, jobId);
    job.expiresAt = now + ttlMs;
    this.#state.schedule(job, 'ttl', job.expiresAt);
    return this.#finish(this.#state.changed(job), snapshotJob(job));
  }

  async purgeQueue(endpointId: string): Promise<number> {
    this.#open();
    const endpoint = this.#state.endpoints.get(endpointId);
    if (!endpoint) return 0;
    const changes = newChanges();
    const removed = endpoint.queue.size;
    for (const job of [...endpoint.queue.values()]) this.#state.delete(endpoint, job, changes);
    return this.#finish(changes, removed);
  }

  // -------------------------------------------------------------- lost jobs and workers

  async requeueJob(
    endpointId: string,
    jobId: string,
    workerId: string,
    rules: RequeueRules,
    now: number,
  ): Promise<{ readonly requeued: boolean } & ChangeOutcome> {
    this.#open();
    const changes = newChanges();
    const job = this.#state.job(endpointId, jobId);
    const requeued =
      job !== undefined && job.status === 'IN_PROGRESS' && job.workerId === workerId && this.#state.requeue(job, rules.maxRequeues, now, changes);
    return this.#finish(changes, { requeued, ended: changes.ended, stops: changes.stops });
  }

  async returnJob(endpointId: string, jobId: string, workerId: string, attempt: number): Promise<boolean> {
    this.#open();
    const job = this.#state.job(endpointId, jobId);
    if (!job || job.status !== 'IN_PROGRESS' || job.workerId !== workerId || job.attempt !== attempt) return false;
    const changes = newChanges();
    this.#state.apply(job, giveBackChange(job), changes);
    return this.#finish(changes, true);
  }

  async touchWorker(endpointId: string, workerId: string, touch: TouchWorker, now: number): Promise<StoredWorker> {
    const endpoint = this.#state.endpointOrCreate(endpointId);
    const known = endpoint.workers.has(workerId);
    const worker = endpoint.touchWorker(workerId, now);
    if (touch.heartbeats === true) worker.heartbeats = true;
    if (touch.initializing !== undefined) worker.initializing = touch.initializing;
    if (touch.pingIntervalMs !== undefined) worker.pingIntervalMs = touch.pingIntervalMs;
    for (const jobId of touch.reportedJobIds ?? []) {
      const job = endpoint.jobs.get(jobId);
      if (job && job.status === 'IN_PROGRESS' && job.workerId === workerId) job.reportedAt = now;
    }
    const changes = newChanges();
    if (!known) changes.events.push({ type: 'worker', endpointId, workerId });
    return this.#finish(changes, snapshotWorker(worker));
  }

  async getWorker(endpointId: string, workerId: string): Promise<StoredWorker | undefined> {
    const worker = this.#state.endpoints.get(endpointId)?.workers.get(workerId);
    return worker ? snapshotWorker(worker) : undefined;
  }

  async listWorkers(endpointId: string): Promise<StoredWorker[]> {
    return [...(this.#state.endpoints.get(endpointId)?.workers.values() ?? [])].map(snapshotWorker);
  }

  async removeWorker(endpointId: string, workerId: string, rules: RequeueRules, now: number): Promise<GoneWorker | undefined> {
    this.#open();
    const endpoint = this.#state.endpoints.get(endpointId);
    if (!endpoint?.workers.has(workerId)) return undefined;
    const changes = newChanges();
    const gone = this.#state.removeWorker(endpoint, workerId, rules, now, changes);
    return this.#finish(changes, gone);
  }

  async sweepSilentWorkers(silentBefore: number, rules: RequeueRules, now: number): Promise<GoneWorker[]> {
    this.#open();
    const changes = newChanges();
    const gone: GoneWorker[] = [];
    for (const endpoint of this.#state.endpoints.values()) {
      for (const worker of [...endpoint.workers.values()]) {
        if (worker.heartbeats && worker.lastSeenAt < silentBefore) gone.push(this.#state.removeWorker(endpoint, worker.id, rules, now, changes));
      }
    }
    return this.#finish(changes, gone);
  }

  async unreportedJobs(endpointId: string, workerId: string, unreportedBefore: number): Promise<string[]> {
    const endpoint = this.#state.endpoints.get(endpointId);
    const worker = endpoint?.workers.get(workerId);
    if (!endpoint || !worker) return [];
    const lost: string[] = [];
    for (const jobId of worker.jobIds) {
      const job = endpoint.jobs.get(jobId);
      if (!job || job.status !== 'IN_PROGRESS' || job.workerId !== workerId) continue;
      if (Math.max(job.startedAt ?? unreportedBefore, job.reportedAt ?? 0) < unreportedBefore) lost.push(jobId);
    }
    return lost;
  }

  // -------------------------------------------------------------- time

  async nextDueAt(): Promise<number | undefined> {
    return this.peekNextDueAt();
  }

  /** nextDueAt, answered at once: this store's deadlines live in this process. */
  peekNextDueAt(): number | undefined {
    for (let top = this.#state.due.peek(); top !== undefined; top = this.#state.due.peek()) {
      if (this.#state.stillDue(top)) return top.due;
      this.#state.due.pop();
    }
    return undefined;
  }

  async applyDue(now: number): Promise<DueOutcome> {
    this.#open();
    const changes = newChanges();
    for (let top = this.#state.due.peek(); top !== undefined && top.due <= now; top = this.#state.due.peek()) {
      this.#state.due.pop();
      const endpoint = this.#state.endpoints.get(top.endpointId);
      const job = endpoint?.jobs.get(top.jobId);
      if (!endpoint || !job || !this.#state.stillDue(top)) continue;
      if (top.kind === 'ttl') {
        // ttl elapsed: the job is deleted in any state; a running one's worker is told to stop.
        const stop = expiryStop(job);
        if (stop !== undefined && job.workerId !== undefined) this.#state.stop(changes, job, job.workerId, stop);
        this.#state.delete(endpoint, job, changes);
      } else if (top.kind === 'execution') {
        this.#state.apply(job, timeoutChange(job, now), changes);
      } else {
        this.#state.delete(endpoint, job, changes);
      }
    }
    return this.#finish(changes, { ended: changes.ended, stops: changes.stops, deleted: changes.deleted });
  }

  // -------------------------------------------------------------- events and life

  subscribe(listener: (event: StoreEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#listeners.clear();
    this.#state.due.clear();
  }

  #open(): void {
    if (this.#closed) throw new Error('The job store is closed');
  }

  /** Emit the call's events (after its change is complete), then answer. */
  #finish<T>(changes: Changes, answer: T): T {
    for (const event of changes.events) {
      for (const listener of [...this.#listeners]) {
        try {
          listener(event);
        } catch {
          // A listener's failure is its own: the store's change stands.
        }
      }
    }
    return answer;
  }
}
