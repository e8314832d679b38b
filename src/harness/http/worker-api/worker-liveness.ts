/**
 * @module harness/http/worker-api/worker-liveness
 * Which workers the worker API has heard from, and when one is gone. A worker reached
 * over HTTP is alive while it has a long poll open (job-take, job-stop: the socket
 * closes when its process dies) or while it keeps calling (ping, take, done, ...). One
 * silent for `missedPings` x `pingIntervalMs` is gone: its IN_PROGRESS jobs go back to
 * the queue (counted as retried) and it leaves the presence table, so /health stops
 * counting it. A worker that is alive but does not list a job it was handed in its
 * heartbeat for as long (the job-take answer that carried it was lost) gets that job
 * requeued (`reconcile`). Ages are read on the harness's clock. In-process workers are
 * never swept here: they do not ping.
 */
import type { EndpointJobs } from '../../endpoint-jobs.js';
import type { Harness } from '../../harness.js';
import type { LivenessSettings } from './options.js';
import { keyOf } from './pending-stops.js';

export interface GoneWorker {
  readonly endpointId: string;
  readonly workerId: string;
  /** Job ids put back in the queue. */
  readonly requeued: string[];
  readonly reason: 'silent' | 'unhealthy';
}

export class WorkerLiveness {
  readonly #harness: Harness;
  /** undefined: never declare a worker gone for silence. */
  readonly #silenceMs: number | undefined;
  readonly #sweepIntervalMs: number | undefined;
  readonly #onGone: (gone: GoneWorker) => void;
  /** Workers seen over HTTP, per endpoint. */
  readonly #known = new Map<string, Set<string>>();
  readonly #openPolls = new Map<string, number>();
  /** When a running job was last listed by its worker's heartbeat, per endpoint and job. */
  readonly #reportedAt = new Map<string, { workerId: string; at: number }>();
  #timer: NodeJS.Timeout | undefined;

  constructor(harness: Harness, liveness: LivenessSettings | false, onGone: (gone: GoneWorker) => void) {
    this.#harness = harness;
    this.#onGone = onGone;
    if (liveness !== false) {
      this.#silenceMs = liveness.pingIntervalMs * liveness.missedPings;
      // At most a second between sweeps: a dead worker is requeued within about the silence + 1 s.
      this.#sweepIntervalMs = liveness.sweepIntervalMs ?? Math.max(10, Math.min(1_000, liveness.pingIntervalMs, Math.floor(this.#silenceMs / 3)));
    }
  }

  /** How long a worker may stay silent, ms; undefined when liveness is off. */
  get silenceMs(): number | undefined {
    return this.#silenceMs;
  }

  /** The worker called: it is alive now. */
  seen(endpoint: EndpointJobs, workerId: string): void {
    endpoint.workers.touch(workerId, this.#harness.clock.now());
    let workers = this.#known.get(endpoint.id);
    if (!workers) {
      workers = new Set();
      this.#known.set(endpoint.id, workers);
    }
    workers.add(workerId);
  }

  /** Whether the worker reached this harness over HTTP (and is not gone). */
  isKnown(endpointId: string, workerId: string): boolean {
    return this.#known.get(endpointId)?.has(workerId) ?? false;
  }

  /** A long poll of the worker is open; the returned function closes it (once). */
  openPoll(endpoint: EndpointJobs, workerId: string): () => void {
    this.seen(endpoint, workerId);
    const key = keyOf(endpoint.id, workerId);
    this.#openPolls.set(key, (this.#openPolls.get(key) ?? 0) + 1);
    let open = true;
    return () => {
      if (!open) return;
      open = false;
      const left = (this.#openPolls.get(key) ?? 1) - 1;
      if (left > 0) this.#openPolls.set(key, left);
      else this.#openPolls.delete(key);
      // It was there until now: silence counts from the end of the poll.
      if (this.isKnown(endpoint.id, workerId)) endpoint.workers.touch(workerId, this.#harness.clock.now());
    };
  }

  /**
   * The worker's heartbeat listed `reportedJobIds` (its jobs in progress). A job the
   * harness handed to it that it has not reported for the whole silence window (counted
   * from the hand-over, or from the last ping that listed it) never reached it: the
   * answer of the job-take that carried it was lost, while the worker, alive and
   * polling, is never declared gone. Such jobs go back to the queue; answers their ids.
   * The window leaves room for a ping sent just before the worker received the job.
   */
  reconcile(endpoint: EndpointJobs, workerId: string, reportedJobIds: readonly string[]): string[] {
    const silence = this.#silenceMs;
    const presence = endpoint.workers.get(workerId);
    if (silence === undefined || !presence || presence.jobs.size === 0) return [];
    const now = this.#harness.clock.now();
    const reported = new Set(reportedJobIds);
    const lost: string[] = [];
    for (const jobId of presence.jobs) {
      const job = endpoint.find(jobId);
      if (!job || job.status !== 'IN_PROGRESS' || job.workerId !== workerId) continue;
      const key = keyOf(endpoint.id, jobId);
      if (reported.has(jobId)) {
        this.#reportedAt.set(key, { workerId, at: now });
        continue;
      }
      const last = this.#reportedAt.get(key);
      const since = Math.max(job.startedAt ?? now, last !== undefined && last.workerId === workerId ? last.at : 0);
      if (now - since > silence) lost.push(jobId);
    }
    const requeued: string[] = [];
    for (const jobId of lost) {
      this.#reportedAt.delete(keyOf(endpoint.id, jobId));
      if (endpoint.requeueJob(jobId, workerId)) requeued.push(jobId);
    }
    return requeued;
  }

  /** Declare every worker silent for too long gone; answers them. */
  sweep(): GoneWorker[] {
    const silence = this.#silenceMs;
    if (silence === undefined) return [];
    this.#pruneReports();
    const now = this.#harness.clock.now();
    const gone: GoneWorker[] = [];
    for (const [endpointId, workers] of this.#known) {
      const endpoint = this.#harness.findEndpoint(endpointId);
      if (!endpoint) {
        this.#known.delete(endpointId);
        continue;
      }
      for (const workerId of [...workers]) {
        const presence = endpoint.workers.get(workerId);
        if (!presence) {
          workers.delete(workerId); // removed elsewhere (the management API, a close)
          continue;
        }
        if (this.#openPolls.has(keyOf(endpointId, workerId))) {
          presence.lastSeenAt = now;
          continue;
        }
        if (now - presence.lastSeenAt > silence) gone.push(this.declareGone(endpoint, workerId, 'silent'));
      }
    }
    return gone;
  }

  /** The worker is gone (silent, or it reported itself unhealthy): requeue its jobs and forget it. */
  declareGone(endpoint: EndpointJobs, workerId: string, reason: GoneWorker['reason']): GoneWorker {
    const requeued = endpoint.requeueWorkerJobs(workerId);
    endpoint.workers.remove(workerId);
    this.#known.get(endpoint.id)?.delete(workerId);
    const gone: GoneWorker = { endpointId: endpoint.id, workerId, requeued, reason };
    this.#onGone(gone);
    return gone;
  }

  /** Forget report times of jobs that are no longer running. */
  #pruneReports(): void {
    for (const [key, report] of this.#reportedAt) {
      const [endpointId = '', jobId = ''] = key.split('\u0000');
      const job = this.#harness.findEndpoint(endpointId)?.find(jobId);
      if (!job || job.status !== 'IN_PROGRESS' || job.workerId !== report.workerId) this.#reportedAt.delete(key);
    }
  }

  /** Sweep every `sweepIntervalMs` (real time) until stop(); a no-op when liveness is off. */
  start(): void {
    if (this.#sweepIntervalMs === undefined || this.#timer) return;
    this.#timer = setInterval(() => this.sweep(), this.#sweepIntervalMs);
    this.#timer.unref();
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }
}
