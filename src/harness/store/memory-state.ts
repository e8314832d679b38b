/**
 * @module harness/store/memory-state
 * What the in-memory store holds (endpoints, the deadline heap) and the rules that
 * change a job (end, requeue, delete, stop), shared by the store's calls. Each rule
 * records what it did in the call's `Changes`; the store emits them when the call is done.
 */
import { ServerlessWorkerError, nextState, type JobErrorPayload, type JobTrigger } from '../../job/index.js';
import { requeueLimitPayload } from '../attempts.js';
import { DueHeap, type DueEntry } from './due-heap.js';
import type { GoneWorker, RequeueRules, StopOrder, StoreEvent, StoredJob } from './job-store.js';
import { MemoryEndpoint } from './memory-endpoint.js';
import { owned, snapshotJob, type MemoryJob } from './memory-records.js';

/** What one call changed, collected while it runs. */
export interface Changes {
  readonly ended: StoredJob[];
  readonly stops: StopOrder[];
  readonly deleted: StoredJob[];
  readonly events: StoreEvent[];
}

export const newChanges = (): Changes => ({ ended: [], stops: [], deleted: [], events: [] });

export class MemoryState {
  readonly endpoints = new Map<string, MemoryEndpoint>();
  readonly due = new DueHeap();

  endpointOrCreate(endpointId: string): MemoryEndpoint {
    let endpoint = this.endpoints.get(endpointId);
    if (!endpoint) {
      endpoint = new MemoryEndpoint(endpointId, {});
      this.endpoints.set(endpointId, endpoint);
    }
    return endpoint;
  }

  job(endpointId: string, jobId: string): MemoryJob | undefined {
    return this.endpoints.get(endpointId)?.jobs.get(jobId);
  }

  found(endpointId: string, jobId: string): MemoryJob {
    const job = this.job(endpointId, jobId);
    if (!job) {
      throw new ServerlessWorkerError(
        'SW_JOB_NOT_FOUND',
        `Job ${jobId} not found on endpoint ${endpointId}: it never existed, its ttl expired, or its results retention elapsed`,
        { jobId, endpointId },
      );
    }
    return job;
  }

  endpointOf(job: MemoryJob): MemoryEndpoint {
    return this.endpointOrCreate(job.endpointId);
  }

  transition(endpoint: MemoryEndpoint, job: MemoryJob, trigger: JobTrigger): void {
    endpoint.setStatus(job, nextState(job.status, trigger, job.id));
  }

  schedule(job: MemoryJob, kind: DueEntry['kind'], due: number): void {
    this.due.push(due, job.endpointId, job.id, kind);
    // Live deadlines: a ttl per job, an execution timeout per running job, a retention per ended one.
    let live = 0;
    for (const endpoint of this.endpoints.values()) live += 2 * endpoint.jobs.size - endpoint.count('IN_QUEUE');
    // Stale entries (a result cleared the execution deadline, a ttl moved) are dropped once they pass a quarter of the live ones.
    if (this.due.size > live + (live >> 2) + 1_024) this.rebuildDue();
  }

  /** Drop stale entries: one entry per deadline each job still has. */
  rebuildDue(): void {
    this.due.clear();
    for (const endpoint of this.endpoints.values()) {
      for (const job of endpoint.jobs.values()) {
        this.due.push(job.expiresAt, endpoint.id, job.id, 'ttl');
        if (job.status === 'IN_PROGRESS' && job.executionDeadline !== undefined) this.due.push(job.executionDeadline, endpoint.id, job.id, 'execution');
        if (job.deleteAt !== undefined) this.due.push(job.deleteAt, endpoint.id, job.id, 'retention');
      }
    }
  }

  stillDue(entry: DueEntry): boolean {
    const job = this.job(entry.endpointId, entry.jobId);
    if (!job) return false;
    if (entry.kind === 'ttl') return job.expiresAt === entry.due;
    if (entry.kind === 'execution') return job.status === 'IN_PROGRESS' && job.executionDeadline === entry.due;
    return job.deleteAt === entry.due;
  }

  changed(job: MemoryJob, changes: Changes = newChanges()): Changes {
    changes.events.push({ type: 'changed', endpointId: job.endpointId, jobId: job.id });
    return changes;
  }

  stop(changes: Changes, job: MemoryJob, workerId: string, reason: StopOrder['reason']): void {
    const stop: StopOrder = { endpointId: job.endpointId, workerId, jobId: job.id, reason, attempt: job.attempt };
    changes.stops.push(stop);
    changes.events.push({ type: 'stop', ...stop });
  }

  end(job: MemoryJob, trigger: JobTrigger, result: { output?: unknown; error?: JobErrorPayload }, now: number, changes: Changes): void {
    const endpoint = this.endpointOf(job);
    // The store's copies first: a value that cannot be copied throws here, before the
    // job changes, never after it is COMPLETED without its output.
    const output = owned(result.output);
    const error = owned(result.error);
    this.transition(endpoint, job, trigger);
    if (job.startedAt !== undefined) job.endedAt = now;
    if (job.status === 'COMPLETED') {
      job.output = output;
      endpoint.counters.completed++;
    } else if (job.status === 'FAILED' || job.status === 'TIMED_OUT') {
      if (error) job.error = error;
      endpoint.counters.failed++;
    }
    endpoint.queue.delete(job.id);
    if (job.workerId !== undefined) changes.events.push({ type: 'worker', endpointId: endpoint.id, workerId: job.workerId });
    endpoint.release(job);
    // Fields are set to undefined, never deleted: a deleted property turns the record into a slower, larger dictionary.
    job.executionDeadline = undefined;
    job.deleteAt = now + job.retentionMs;
    this.schedule(job, 'retention', job.deleteAt);
    this.changed(job, changes);
    changes.ended.push(snapshotJob(job));
  }

  /** Back in the queue; answers false when a lost job was lost too often and ended FAILED instead. */
  requeue(job: MemoryJob, trigger: 'retry' | 'requeue', maxRequeues: number, now: number, changes: Changes): boolean {
    const endpoint = this.endpointOf(job);
    if (trigger === 'requeue' && ++job.lost > maxRequeues) {
      this.end(job, 'fail', { error: requeueLimitPayload(job, maxRequeues, job.workerId) }, now, changes);
      return false;
    }
    if (trigger === 'retry') job.lost = 0;
    this.transition(endpoint, job, trigger);
    if (job.workerId !== undefined) changes.events.push({ type: 'worker', endpointId: endpoint.id, workerId: job.workerId });
    endpoint.release(job);
    for (const field of ['output', 'error', 'startedAt', 'endedAt', 'resultFrom', 'executionDeadline', 'deleteAt', 'reportedAt'] as const) job[field] = undefined;
    job.unread = [];
    job.chunkCount = 0;
    job.queuedAt = now;
    job.retries++;
    endpoint.counters.retried++;
    endpoint.queue.set(job.id, job);
    this.changed(job, changes);
    changes.events.push({ type: 'queued', endpointId: endpoint.id });
    return true;
  }

  /** A job taken but never handed to its worker: back at its place in the queue, as if never taken (nothing counted). */
  giveBack(job: MemoryJob, changes: Changes): void {
    const endpoint = this.endpointOf(job);
    this.transition(endpoint, job, 'requeue');
    if (job.workerId !== undefined) changes.events.push({ type: 'worker', endpointId: endpoint.id, workerId: job.workerId });
    endpoint.release(job);
    for (const field of ['startedAt', 'executionDeadline', 'executionTimeoutMs', 'reportedAt'] as const) job[field] = undefined;
    job.attempt--;
    endpoint.returnToQueue(job);
    this.changed(job, changes);
    changes.events.push({ type: 'queued', endpointId: endpoint.id });
  }

  removeWorker(endpoint: MemoryEndpoint, workerId: string, rules: RequeueRules, now: number, changes: Changes): GoneWorker {
    const worker = endpoint.workers.get(workerId);
    const requeued: string[] = [];
    const endedBefore = changes.ended.length;
    for (const jobId of worker?.jobIds ?? []) {
      const job = endpoint.jobs.get(jobId);
      if (job && job.status === 'IN_PROGRESS' && job.workerId === workerId && this.requeue(job, 'requeue', rules.maxRequeues, now, changes)) requeued.push(jobId);
    }
    endpoint.workers.delete(workerId);
    changes.events.push({ type: 'worker', endpointId: endpoint.id, workerId });
    return { endpointId: endpoint.id, workerId, requeued, ended: changes.ended.slice(endedBefore), stops: [] };
  }

  delete(endpoint: MemoryEndpoint, job: MemoryJob, changes: Changes): void {
    const snapshot = snapshotJob(job);
    const workerId = job.workerId;
    if (!endpoint.remove(job)) return;
    if (workerId !== undefined) changes.events.push({ type: 'worker', endpointId: endpoint.id, workerId });
    changes.deleted.push(snapshot);
    this.changed(job, changes);
  }
}

