/**
 * @module harness/worker-api/pending-stops
 * Stop requests waiting for their worker's job-stop poll, per worker. A request stays
 * until a poll takes it or `retentionMs` passes (a worker that never polls again must
 * not make the list grow for ever); a poll that is waiting is woken at once. Stops
 * handed out are remembered as long, so that a stop a heartbeat asks for again
 * (`recordOnce`: the worker lists the job until its handler has stopped) is not sent twice.
 */
import { type StopReason, systemClock } from 'serverless-worker/internal';

interface WorkerStops {
  readonly entries: Map<string, { reason: StopReason; at: number; attempt?: number }>;
  readonly waiters: Set<() => void>;
  /** Jobs whose stop a poll took, and when. */
  readonly sent: Map<string, number>;
}

/** Stops handed to a worker in one job-stop answer. */
export interface StopBatch {
  readonly jobIds: string[];
  readonly reasons: Record<string, StopReason>;
  /** The attempt to stop, per job, where known: a worker running two attempts of a job stops only this one. */
  readonly attempts: Record<string, number>;
}

export class PendingStops {
  readonly #workers = new Map<string, WorkerStops>();
  readonly #retentionMs: number;
  readonly #now: () => number;

  /** Called when a stop is recorded: the owner arms its prune timer only while stops are held. */
  readonly #onRecord: (() => void) | undefined;

  constructor(retentionMs: number, now: () => number = () => systemClock.now(), onRecord?: () => void) {
    this.#retentionMs = retentionMs;
    this.#now = now;
    this.#onRecord = onRecord;
  }

  /** Whether any stop waits or was handed out within the retention (then prune has work to do). */
  get holdsStops(): boolean {
    for (const stops of this.#workers.values()) if (stops.entries.size > 0 || stops.sent.size > 0) return true;
    return false;
  }

  /** Ask `workerId` to stop `jobId` (its `attempt` when known); wakes its waiting poll. The first reason recorded for a job wins. */
  record(endpointId: string, workerId: string, jobId: string, reason: StopReason, attempt?: number): void {
    const stops = this.#stops(endpointId, workerId);
    if (!stops.entries.has(jobId)) stops.entries.set(jobId, { reason, at: this.#now(), ...(attempt !== undefined ? { attempt } : {}) });
    const waiters = [...stops.waiters];
    stops.waiters.clear();
    for (const wake of waiters) wake();
    this.#onRecord?.();
  }

  /** record(), unless a stop for the job is already waiting for the worker or was handed to it (within the retention). */
  recordOnce(endpointId: string, workerId: string, jobId: string, reason: StopReason, attempt?: number): void {
    const stops = this.#workers.get(keyOf(endpointId, workerId));
    if (stops?.entries.has(jobId) === true || stops?.sent.has(jobId) === true) return;
    this.record(endpointId, workerId, jobId, reason, attempt);
  }

  /** Take every stop waiting for the worker; undefined when none. */
  drain(endpointId: string, workerId: string): StopBatch | undefined {
    const key = keyOf(endpointId, workerId);
    const stops = this.#workers.get(key);
    if (!stops || stops.entries.size === 0) return undefined;
    const jobIds = [...stops.entries.keys()];
    const reasons: Record<string, StopReason> = {};
    const attempts: Record<string, number> = {};
    const now = this.#now();
    for (const [jobId, entry] of stops.entries) {
      reasons[jobId] = entry.reason;
      if (entry.attempt !== undefined) attempts[jobId] = entry.attempt;
      stops.sent.set(jobId, now);
    }
    stops.entries.clear();
    return { jobIds, reasons, attempts };
  }

  /**
   * Drop stops waiting for `workerId` about `jobIds`: the jobs were just handed to it
   * (again), so a stop recorded before concerns an earlier hand-over (a worker declared
   * gone that came back, or a restarted pod with the same id) and must not stop this run.
   */
  forget(endpointId: string, workerId: string, jobIds: readonly string[]): void {
    const key = keyOf(endpointId, workerId);
    const stops = this.#workers.get(key);
    if (!stops) return;
    for (const jobId of jobIds) {
      stops.entries.delete(jobId);
      stops.sent.delete(jobId);
    }
    if (isEmpty(stops)) this.#workers.delete(key);
  }

  /** Resolves when a stop is recorded for the worker, or when `signal` aborts. */
  wait(endpointId: string, workerId: string, signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.resolve();
    const stops = this.#stops(endpointId, workerId);
    return new Promise((resolve) => {
      const wake = (): void => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = (): void => {
        stops.waiters.delete(wake);
        // A poll that ends with nothing for it leaves no entry behind (prune runs only while stops are held).
        const key = keyOf(endpointId, workerId);
        if (this.#workers.get(key) === stops && isEmpty(stops)) this.#workers.delete(key);
        resolve();
      };
      stops.waiters.add(wake);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Drop stops older than the retention, and workers left with nothing. */
  prune(): void {
    const oldest = this.#now() - this.#retentionMs;
    for (const [key, stops] of this.#workers) {
      for (const [jobId, entry] of stops.entries) if (entry.at < oldest) stops.entries.delete(jobId);
      for (const [jobId, at] of stops.sent) if (at < oldest) stops.sent.delete(jobId);
      if (isEmpty(stops)) this.#workers.delete(key);
    }
  }

  #stops(endpointId: string, workerId: string): WorkerStops {
    const key = keyOf(endpointId, workerId);
    let stops = this.#workers.get(key);
    if (!stops) {
      stops = { entries: new Map(), waiters: new Set(), sent: new Map() };
      this.#workers.set(key, stops);
    }
    return stops;
  }
}

function isEmpty(stops: WorkerStops): boolean {
  return stops.entries.size === 0 && stops.waiters.size === 0 && stops.sent.size === 0;
}

/** Endpoint and worker ids can hold any character but NUL in practice. */
export function keyOf(endpointId: string, workerId: string): string {
  return `${endpointId}\u0000${workerId}`;
}
