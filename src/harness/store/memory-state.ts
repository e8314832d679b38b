/**
 * @module harness/store/memory-state
 * What the in-memory store holds (endpoints, the deadline heap) and how a change the
 * job rules describe (job-rules.ts) is applied to it, shared by the store's calls. Each
 * change is recorded in the call's `Changes`; the store emits them when the call is done.
 */
import { ServerlessWorkerError, nextState, type JobTrigger } from '../../job/index.js';
import { DueHeap, type DueEntry } from './due-heap.js';
import type { GoneWorker, RequeueRules, StopOrder, StoreEvent, StoredJob } from './job-store.js';
import { changeEvents, requeueChange, stopOrderOf, type JobChange } from './job-rules.js';
import { MemoryEndpoint } from './memory-endpoint.js';
import { NO_CHUNKS, owned, snapshotJob, type MemoryJob } from './memory-records.js';

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
    // Stale entries (a result cleared the execution deadline, a ttl moved, a deleted job's ttl) are dropped once they
    // outnumber the live ones: a rebuild walks every job (0.1-0.2 s for 750 000), and an entry is about 30 bytes.
    if (this.due.size > 2 * live + 1_024) this.rebuildDue();
  }

  /** Drop stale entries: one entry per deadline each job still has. */
  rebuildDue(): void {
    this.due.refill((add) => {
      for (const endpoint of this.endpoints.values()) {
        for (const job of endpoint.jobs.values()) {
          add(job.expiresAt, endpoint.id, job.id, 'ttl');
          if (job.status === 'IN_PROGRESS' && job.executionDeadline !== undefined) add(job.executionDeadline, endpoint.id, job.id, 'execution');
          if (job.deleteAt !== undefined) add(job.deleteAt, endpoint.id, job.id, 'retention');
        }
      }
    });
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

  /**
   * Apply a change the job rules describe (job-rules.ts) to the job: its fields, its
   * place (queue, worker, deadlines), the endpoint's counters, and the call's events.
   */
  apply(job: MemoryJob, change: JobChange, changes: Changes): void {
    const endpoint = this.endpointOf(job);
    const { status, ...set } = change.fields;
    // The store's frozen copy of an error (the rules build some); an output comes copied already (complete).
    const fields = set.error !== undefined ? { ...set, error: owned(set.error) } : set;
    endpoint.setStatus(job, status);
    endpoint.release(job);
    // Fields are set to undefined, never deleted: a deleted property turns the record into a slower, larger dictionary.
    Object.assign(job, fields);
    if (change.dropsChunks) job.unread = NO_CHUNKS;
    if (change.counted !== undefined) endpoint.counters[change.counted]++;
    if (change.kind === 'ended') {
      endpoint.queue.delete(job.id);
      if (job.deleteAt !== undefined) this.schedule(job, 'retention', job.deleteAt);
      changes.ended.push(snapshotJob(job));
    } else if (change.kind === 'requeued') {
      endpoint.queue.set(job.id, job);
    } else {
      endpoint.returnToQueue(job);
    }
    const stop = stopOrderOf(job, change);
    if (stop) changes.stops.push(stop);
    changes.events.push(...changeEvents(job, change));
  }

  /** The lost job back in the queue (requeueChange); answers false when it was lost too often and ended FAILED instead. */
  requeue(job: MemoryJob, maxRequeues: number, now: number, changes: Changes): boolean {
    const change = requeueChange(job, 'requeue', maxRequeues, now);
    this.apply(job, change, changes);
    return change.kind === 'requeued';
  }

  removeWorker(endpoint: MemoryEndpoint, workerId: string, rules: RequeueRules, now: number, changes: Changes): GoneWorker {
    const worker = endpoint.workers.get(workerId);
    const requeued: string[] = [];
    const endedBefore = changes.ended.length;
    for (const jobId of worker?.jobIds ?? []) {
      const job = endpoint.jobs.get(jobId);
      if (job && job.status === 'IN_PROGRESS' && job.workerId === workerId && this.requeue(job, rules.maxRequeues, now, changes)) requeued.push(jobId);
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
