/**
 * @module harness/worker-api/worker-liveness
 * Which workers are alive, for the worker API. A worker reached over HTTP is alive
 * while it keeps calling: every request it sends (ping, job-take, job-done,
 * job-stream, job-stop) marks it seen when it arrives. A long poll held open does not:
 * a frozen process (SIGSTOP, a paused VM) or a lost network keeps its sockets open
 * without sending anything, and the harness answering its poll proves nothing about it
 * (spec: the platform knows a worker is alive from its heartbeat). One silent for
 * `missedPings` x `pingIntervalMs` is gone, whatever sockets it holds: its IN_PROGRESS
 * jobs go back to the queue (counted as retried) and it leaves the presence the job
 * store keeps, so /health stops counting it. A worker that is alive but does not list
 * a job it was handed in its heartbeat for as long (the job-take answer that carried it
 * was lost) gets that job requeued (`reconcile`). Presence lives in the job store
 * (shared by every harness process on it; the store removes a silent worker once,
 * whichever process sweeps). Sweeps run on the harness's clock (its scheduler), only
 * while this process knows a worker, and read ages on it. No worker is swept before the
 * silence window has passed since this process started: the ages it would read were
 * written before (a harness that was down longer than the window would otherwise
 * requeue the jobs of live workers that have not reconnected yet). The same holds after
 * the store failed (a PostgreSQL restart): the heartbeats of that time were never
 * written, so every worker gets a whole window again from the first sweep after a
 * failed store call (the soak of issue 32 saw live workers swept and their jobs run
 * twice after a 3-5 s restart with a 6 s window). In-process workers do not send
 * heartbeats and are never swept.
 *
 * A heartbeat also lists the jobs the worker runs: one that no longer runs with it
 * (cancelled, timed out or expired, or requeued after it was declared gone) gets a stop,
 * so that a stop ordered while this process missed the store's events still arrives.
 */
import { HeldList, type EndpointJobs, type Harness, type StopReason, type TimerHandle } from 'serverless-worker/internal';
import type { LivenessSettings } from './options.js';
import { keyOf } from './pending-stops.js';

export interface GoneWorker {
  readonly endpointId: string;
  readonly workerId: string;
  /** Job ids put back in the queue. */
  readonly requeued: string[];
  readonly reason: 'silent' | 'unhealthy';
}

/** What a heartbeat's job list says: jobs requeued because it left them out, and jobs it lists that must stop. */
export interface Reconciled {
  readonly requeued: string[];
  /** `attempt` where the run to stop is known to be the job's last one (cancelled, timed out, or back in the queue). */
  readonly stray: Array<{ readonly jobId: string; readonly reason: StopReason; readonly attempt?: number }>;
}

export class WorkerLiveness {
  readonly #harness: Harness;
  /** undefined: never declare a worker gone for silence. */
  readonly #silenceMs: number | undefined;
  readonly #sweepIntervalMs: number | undefined;
  readonly #onGone: (gone: GoneWorker) => void;
  /**
   * Job-take polls held open in this process, per endpoint and worker: aborted when the worker is declared gone.
   * A worker's list stays while it is known (a take comes and goes once a job: collections/held-list.ts).
   */
  readonly #takePolls = new Map<string, HeldList<AbortController>>();
  /** Workers seen over HTTP by this process, per endpoint and worker (the sweep runs while there are some). */
  readonly #known = new Map<string, { endpointId: string; workerId: string; writtenAt: number }>();
  #sweeps: TimerHandle | undefined;
  #stopped = false;
  /** When this process began to watch workers, or its store came back after failing, on the harness's clock: no sweep before graceFrom + silence. */
  #graceFrom: number;
  /** A store call of the liveness failed since the last sweep (heartbeats may be missing): the next sweep starts a new grace. */
  #storeFailed = false;

  constructor(harness: Harness, liveness: LivenessSettings | false, onGone: (gone: GoneWorker) => void) {
    this.#harness = harness;
    this.#onGone = onGone;
    this.#graceFrom = harness.clock.now();
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

  /** The worker called: it is alive now (it sends heartbeats: a silent one is swept). */
  async seen(endpoint: EndpointJobs, workerId: string): Promise<void> {
    const key = keyOf(endpoint.id, workerId);
    const now = this.#harness.clock.now();
    const known = this.#known.get(key);
    // Presence is written at most once a quarter of the silence window per worker, not
    // once per call (a busy worker calls for every job): the age a sweep reads of a worker
    // that keeps calling stays under a quarter of the window, so none is swept for it.
    if (known !== undefined && this.#silenceMs !== undefined && now - known.writtenAt < this.#silenceMs / 4) return;
    this.#known.set(key, { endpointId: endpoint.id, workerId, writtenAt: now });
    try {
      await this.#noteStoreFailure(endpoint.workers.touch(workerId, { heartbeats: true }));
    } catch (error) {
      // Not written: the worker's next call writes it again.
      if (known) this.#known.set(key, known);
      else this.#known.delete(key);
      throw error;
    }
    this.#armSweeps();
  }

  /**
   * A job-take poll of the worker is held open: the answered signal aborts when the
   * worker is declared gone, so that a frozen worker's open poll does not take the jobs
   * just put back in the queue. `release` once the poll is answered. Given `controller`
   * (a take of the IPC channel, whose caller made one already), that one is aborted.
   */
  holdTake(
    endpointId: string,
    workerId: string,
    controller = new AbortController(),
  ): { readonly signal: AbortSignal; readonly controller: AbortController; release(): void } {
    const key = keyOf(endpointId, workerId);
    let polls = this.#takePolls.get(key);
    if (polls === undefined) {
      polls = new HeldList();
      this.#takePolls.set(key, polls);
    }
    return { signal: controller.signal, controller, release: polls.add(controller) };
  }

  /** Whether the worker reached this harness process over HTTP (and was not declared gone since). */
  isKnown(endpointId: string, workerId: string): boolean {
    return this.#known.has(keyOf(endpointId, workerId));
  }

  /**
   * The worker's heartbeat listed `reportedJobIds` (its jobs in progress): the store
   * notes when. A job the harness handed to it that it has not reported for the whole
   * silence window (counted from the hand-over, or from the last ping that listed it)
   * never reached it: the answer of the job-take that carried it was lost, while the
   * worker, alive and polling, is never declared gone. Such jobs go back to the queue;
   * answers their ids. The window leaves room for a ping sent just before the worker
   * received the job.
   */
  async reconcile(endpoint: EndpointJobs, workerId: string, reportedJobIds: readonly string[]): Promise<Reconciled> {
    const worker = await this.#noteStoreFailure(endpoint.workers.touch(workerId, { reportedJobIds }));
    const stray = await this.#strayJobs(endpoint, workerId, new Set(worker.jobIds), reportedJobIds);
    const silence = this.#silenceMs;
    if (silence === undefined) return { requeued: [], stray };
    const lost = await endpoint.unreportedJobs(workerId, this.#harness.clock.now() - silence);
    const requeued: string[] = [];
    for (const jobId of lost) if (await endpoint.requeueJob(jobId, workerId)) requeued.push(jobId);
    return { requeued, stray };
  }

  /** Declare every worker silent for too long gone (on every endpoint of the store); answers them. */
  async sweep(): Promise<GoneWorker[]> {
    const silence = this.#silenceMs;
    if (silence === undefined) return [];
    const now = this.#harness.clock.now();
    if (this.#storeFailed) {
      // The store failed since the last sweep: the heartbeats of that time were not written.
      this.#storeFailed = false;
      this.#graceFrom = now;
    }
    // Ages written before this process started (or before its store came back) say nothing yet: every worker gets a whole window to call.
    if (now - this.#graceFrom < silence) return [];
    return this.#noteStoreFailure(this.#sweepSilent(now, now - silence));
  }

  async #sweepSilent(now: number, cutoff: number): Promise<GoneWorker[]> {
    // A worker about to be swept stops polling first: the queue hands its requeued jobs to waiting polls at once.
    for (const [key, known] of this.#known) {
      if ((this.#takePolls.get(key)?.size ?? 0) === 0) continue;
      const worker = await this.#harness.findEndpoint(known.endpointId)?.workers.get(known.workerId);
      if (worker !== undefined && worker.lastSeenAt < cutoff) this.#abortTakes(key);
    }
    const swept = await this.#harness.store.sweepSilentWorkers(cutoff, { maxRequeues: this.#harness.maxRequeues }, now);
    const gone: GoneWorker[] = [];
    for (const worker of swept) {
      // Jobs past maxRequeues ended here: reported whether or not this process serves the endpoint yet.
      this.#harness.reportEnded(worker);
      gone.push(this.#forget({ endpointId: worker.endpointId, workerId: worker.workerId, requeued: [...worker.requeued], reason: 'silent' }));
    }
    // Workers removed elsewhere (unhealthy, another process's sweep, an endpoint deleted) are forgotten here too.
    for (const [key, known] of this.#known) {
      const endpoint = this.#harness.findEndpoint(known.endpointId);
      if (!endpoint || !(await endpoint.workers.get(known.workerId))) {
        this.#known.delete(key);
        this.#abortTakes(key);
      }
    }
    return gone;
  }

  /** The worker is gone (silent, or it reported itself unhealthy): requeue its jobs and forget it. */
  async declareGone(endpoint: EndpointJobs, workerId: string, reason: GoneWorker['reason']): Promise<GoneWorker> {
    this.#abortTakes(keyOf(endpoint.id, workerId));
    const requeued = await endpoint.requeueWorkerJobs(workerId);
    return this.#forget({ endpointId: endpoint.id, workerId, requeued, reason });
  }

  /** Sweeping may start (it starts with the first worker seen); a no-op when liveness is off. */
  start(): void {
    this.#stopped = false;
    if (this.#known.size > 0) this.#armSweeps();
  }

  stop(): void {
    this.#stopped = true;
    this.#sweeps?.cancel();
    this.#sweeps = undefined;
  }

  /**
   * Jobs the heartbeat lists that the store no longer has running with the worker, with
   * the reason to give its stop. A job this worker ended itself is left out (a
   * heartbeat's list may lag behind its last result). The stop names the attempt when
   * the worker's run is the job's last attempt (cancelled, timed out by the harness, or
   * put back in the queue), so that it never stops a later run of the job; a job ended
   * or held by another worker, or deleted, gets a stop for every run of it.
   */
  async #strayJobs(endpoint: EndpointJobs, workerId: string, held: ReadonlySet<string>, reported: readonly string[]): Promise<Reconciled['stray']> {
    const stray: Array<{ jobId: string; reason: StopReason; attempt?: number }> = [];
    for (const jobId of reported) {
      if (held.has(jobId)) continue;
      const job = await endpoint.find(jobId);
      if (job === undefined) {
        stray.push({ jobId, reason: 'expired' });
        continue;
      }
      if (job.resultFrom?.workerId === workerId || (job.status === 'IN_PROGRESS' && job.workerId === workerId)) continue;
      const reason: StopReason = job.status === 'TIMED_OUT' ? 'timeout' : 'cancelled';
      const lastRun =
        job.resultFrom === undefined && job.attempt > 0 && (job.status === 'CANCELLED' || job.status === 'TIMED_OUT' || job.status === 'IN_QUEUE');
      stray.push(lastRun ? { jobId, reason, attempt: job.attempt } : { jobId, reason });
    }
    return stray;
  }

  /** `call`'s answer; when it fails, the next sweep starts a new grace (its heartbeats may not have been written). */
  async #noteStoreFailure<T>(call: Promise<T>): Promise<T> {
    try {
      return await call;
    } catch (error) {
      this.#storeFailed = true;
      throw error;
    }
  }

  #abortTakes(key: string): void {
    for (const controller of this.#takePolls.get(key)?.clear() ?? []) controller.abort();
    this.#takePolls.delete(key);
  }

  #forget(gone: GoneWorker): GoneWorker {
    this.#known.delete(keyOf(gone.endpointId, gone.workerId));
    this.#abortTakes(keyOf(gone.endpointId, gone.workerId));
    this.#onGone(gone);
    return gone;
  }

  /**
   * Sweep on the harness's clock while this process knows a worker: every
   * `sweepIntervalMs` at most, and, where every worker of the store is this process's (a
   * store without other processes: `peekNextDueAt`), no sooner than the first moment a
   * known worker could have been silent for the window, so that a server whose workers
   * keep pinging wakes once per window, not every second. A shared store keeps the fixed
   * interval: workers of a process that died are swept by whichever process sweeps.
   */
  #armSweeps(): void {
    const interval = this.#sweepIntervalMs;
    if (interval === undefined || this.#sweeps || this.#stopped) return;
    let delay = interval;
    // From the arming on, not from the first tick: a first tick delayed by a stall is late
    // too. Counted from the first tick only, a stall right after the first worker was seen
    // (before any tick) swept that worker on the delayed tick, its pings of the stall still
    // unread: with a 1 s window (ticks every 250 ms) it failed every time (harness-stall.test.ts).
    let armedAt = this.#harness.clock.now();
    /** When the late ticks now being skipped began; undefined while ticks are on time. */
    let skippingSince: number | undefined;
    this.#sweeps = this.#harness.scheduler.repeat(
      () => delay,
      async () => {
        const now = this.#harness.clock.now();
        const late = now - armedAt - delay;
        // This process did not run for a while (a stalled event loop, a loaded machine): the
        // pings that arrived meanwhile wait in its sockets, read only after this timer. Sweep
        // on a later tick, once they are counted; a harness that keeps stalling still sweeps
        // at least once per silence window.
        if (late > Math.max(interval, 100)) {
          skippingSince ??= now;
          if (now - skippingSince < (this.#silenceMs ?? 0)) {
            delay = interval;
            armedAt = now;
            return;
          }
        }
        skippingSince = undefined;
        await this.sweep();
        delay = await this.#nextSweepIn(interval);
        armedAt = this.#harness.clock.now();
        if (this.#known.size === 0) {
          this.#sweeps?.cancel();
          this.#sweeps = undefined;
        }
      },
    );
  }

  /** How long until the next sweep can find a known worker silent for the window, ms (at least `interval`). */
  async #nextSweepIn(interval: number): Promise<number> {
    const silence = this.#silenceMs;
    if (silence === undefined || this.#harness.store.peekNextDueAt === undefined) return interval;
    // The earliest of the known workers' deadlines (a sweep takes those last seen before now - silence).
    let earliest = Number.POSITIVE_INFINITY;
    for (const known of this.#known.values()) {
      const worker = await this.#harness.findEndpoint(known.endpointId)?.workers.get(known.workerId);
      // Removed elsewhere: the next sweep forgets it.
      if (worker === undefined) return interval;
      earliest = Math.min(earliest, worker.lastSeenAt + silence);
    }
    const next = Math.max(this.#graceFrom + silence, earliest) + 1;
    return Math.max(interval, next - this.#harness.clock.now());
  }
}
