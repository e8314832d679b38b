/**
 * @module worker/worker-runtime
 * The dispatch loop: takes jobs through a transport while the concurrency limit has
 * room, runs each as a JobRun, maps stop requests onto runs, and shuts down
 * gracefully: stop taking, let running jobs finish within a deadline, abort the rest,
 * report what there is, close the transport. A slot is free once its handler has
 * finished, while its result is posted (posting-runs.ts). Its lifecycle is one state
 * (lifecycle-state.ts): starting -> [initializing ->] ready -> draining -> stopped.
 */
import type { Logger } from 'pino';
import { runKey, type Job } from '../job/index.js';
import type { Transport } from '../transports/index.js';
import { sleep, systemClock, withinTime, type Clock } from '../clock/index.js';
import { HeldMap } from '../collections/held-map.js';
import type { JobWatch } from '../transports/watchdog/index.js';
import { EarlyStops } from './early-stops.js';
import { notHeld } from './handed-again.js';
import { reportedHostname } from './error-payload.js';
import type { Handler } from './handler.js';
import type { ErrorOrigin } from './error-payload.js';
import { HeldJobsReport } from './held-jobs-report.js';
import { JobRun, type JobRunDeps, type RunOutcome } from './job-run.js';
import { Lifecycle, type LifecycleListener, type LifecycleState } from './lifecycle-state.js';
import { currentConcurrency, type WorkerConfig } from './options.js';
import { PostingRuns } from './posting-runs.js';
import { SlotWaiters } from './slot-waiters.js';
import { jobScope, type JobScope } from './stray-errors.js';
import type { StopOptions, WorkerExit, WorkerRuntimeEvents, WorkerRuntimeOptions } from './worker-runtime-types.js';

export type { StopOptions, WorkerExit, WorkerRuntimeEvents, WorkerRuntimeOptions } from './worker-runtime-types.js';

/** Wait after a failed take before the next, ms. */
const TAKE_ERROR_BACKOFF_MS = 1_000;

export class WorkerRuntime {
  readonly #handler: Handler<unknown>;
  readonly #config: WorkerConfig;
  readonly #transport: Transport;
  readonly #logger: Logger;
  readonly #events: WorkerRuntimeEvents;
  readonly #jobWatch: JobWatch | undefined;
  readonly #clock: Clock;
  /** Read once: the host name is a system call, and it does not change while the worker runs. */
  readonly #origin: ErrorOrigin;
  /**
   * Runs by job id and attempt (runKey), those posting their result too: two attempts of one job can run side by side.
   * A HeldMap: a run comes and goes once a job, and a Map's replaced tables kept ended runs reachable (collections/held-map.ts).
   */
  readonly #runs = new HeldMap<string, JobRun>();
  /** Runs of #runs posting their result in the background: they hold no slot. */
  readonly #posting = new PostingRuns();
  /** Jobs a transport answered beyond the free slots: run as slots free, never more at once. */
  readonly #pending: Job[] = [];
  /** Stops that came before their job started (early-stops.ts). */
  readonly #earlyStops: EarlyStops;
  readonly #takeController = new AbortController();
  readonly #lifecycle = new Lifecycle();
  #limit: number;
  readonly #slots = new SlotWaiters();
  #loop: Promise<void> | undefined;
  readonly #exit: Promise<WorkerExit>;
  #resolveExit!: (exit: WorkerExit) => void;
  #stopping: Promise<WorkerExit> | undefined;
  /** While stopping: when running jobs are aborted (epoch ms on the clock; Infinity: never). */
  #runsDeadline = Number.POSITIVE_INFINITY;
  #unsubscribeStop: () => void = () => {};
  #completed = 0;
  /** What every run shares, made once. */
  #runDeps: JobRunDeps | undefined;
  /** Every job this worker holds goes into the heartbeat, those waiting for a slot too: the harness requeues a held job that the heartbeat leaves out. */
  readonly #heldJobs = new HeldJobsReport(() => this.#sendHeldJobs());

  constructor(
    handler: Handler<unknown>,
    config: WorkerConfig,
    transport: Transport,
    logger: Logger,
    events: WorkerRuntimeEvents = {},
    options: WorkerRuntimeOptions = {},
  ) {
    this.#handler = handler;
    this.#config = config;
    this.#transport = transport;
    this.#logger = logger;
    this.#events = events;
    this.#jobWatch = options.jobWatch;
    this.#clock = options.clock ?? systemClock;
    this.#earlyStops = new EarlyStops(this.#clock);
    this.#origin = Object.freeze({ workerId: transport.workerId, host: reportedHostname() });
    this.#limit = currentConcurrency(config, { running: 0, current: 1 });
    this.#exit = new Promise((resolve) => (this.#resolveExit = resolve));
  }

  /** The lifecycle state now: `starting` until `beginInitializing()` or `start()`. */
  get state(): LifecycleState {
    return this.#lifecycle.state;
  }

  /** Resolves once the runtime has stopped (the same promise `start()` and `stop()` answer). */
  get exited(): Promise<WorkerExit> {
    return this.#exit;
  }

  /** Hear of every lifecycle move (state, previous); answers the unsubscribe function. */
  onStateChange(listener: LifecycleListener): () => void {
    return this.#lifecycle.onChange((state, previous) => {
      try {
        listener(state, previous);
      } catch (error) {
        this.#logger.warn({ err: error, state, previous }, 'lifecycle listener failed');
      }
    });
  }

  /**
   * Tell the runtime that the author's start-up phase (`init`) runs now: starting ->
   * initializing. No job is taken until `start()`. A `stop()` meanwhile drains and stops
   * without taking any.
   * @throws ServerlessWorkerError SW_INTERNAL when the runtime is past `starting`.
   */
  beginInitializing(): void {
    this.#lifecycle.move('initializing');
  }

  /**
   * Ready: start taking jobs (starting or initializing -> ready). Answers the exit
   * promise; called again, or after `stop()`, it only answers that promise.
   */
  start(): Promise<WorkerExit> {
    const state = this.#lifecycle.state;
    if (state !== 'starting' && state !== 'initializing') return this.#exit;
    this.#lifecycle.move('ready');
    this.#unsubscribeStop = this.#transport.onStop((jobId, reason, attempt) => {
      let stopped = false;
      for (const run of this.#runs.values()) {
        // A stop that names an attempt stops only that one; the platform's stop every run of the job.
        if (run.job.id !== jobId || (attempt !== undefined && run.job.attempt !== undefined && run.job.attempt !== attempt)) continue;
        this.#logger.info({ requestId: jobId, reason, attempt: run.job.attempt }, 'stop requested by the platform');
        run.abort(reason);
        stopped = true;
      }
      // Its job may still be on its way, or waiting for a slot: the stop waits for it.
      if (!stopped) this.#earlyStops.remember(jobId, reason, attempt);
    });
    // The watchdog reported the jobs itself and ends the process: take no more meanwhile.
    const offFired = this.#jobWatch?.onFired(() => void this.stop('unresponsive-handler'));
    const unsubscribeStop = this.#unsubscribeStop;
    this.#unsubscribeStop = () => {
      unsubscribeStop();
      offFired?.();
    };
    this.#loop = this.#takeLoop();
    return this.#exit;
  }

  /** Jobs held now: running, or whose result is still being posted. */
  get running(): number {
    return this.#runs.size;
  }

  /** Results posted in the background now: their handler finished and gave its slot back (at most the concurrency). */
  get posting(): number {
    return this.#posting.size;
  }

  /** Slots in use: jobs held less those posting their result in the background. */
  get #slotsInUse(): number {
    return this.#runs.size - this.#posting.size;
  }

  /** The ids of the jobs held now, running or posting their result (read synchronously, e.g. by an 'exit' listener). */
  get runningJobIds(): string[] {
    return [...this.#runs.values()].map((run) => run.job.id);
  }

  /** Jobs finished since start. */
  get completed(): number {
    return this.#completed;
  }

  /** The concurrency limit in force. */
  get limit(): number {
    return this.#limit;
  }

  /**
   * Graceful shutdown: stop taking jobs, let running ones finish within
   * `shutdownTimeoutMs`, abort the rest (they end SW_WORKER_SHUTDOWN after their
   * grace), then close the transport. Before `start()` it takes no job: the state goes
   * straight to draining and stopped. Moves: -> draining -> stopped. Called again while
   * it stops, it answers the same promise; a shorter `runsWithinMs` than the one under
   * way shortens the wait (a SIGTERM from the harness that came back, while a worker
   * whose harness was gone waits for its results to land).
   */
  stop(reason: WorkerExit['reason'] = 'shutdown', options: StopOptions = {}): Promise<WorkerExit> {
    const runsWithinMs = options.runsWithinMs ?? this.#config.shutdownTimeoutMs;
    const deadline = this.#clock.now() + runsWithinMs;
    if (this.#stopping === undefined) {
      this.#runsDeadline = deadline;
      this.#stopping = this.#drain(reason);
    } else if (deadline < this.#runsDeadline) {
      this.#runsDeadline = deadline;
      this.#logger.info({ runsWithinMs }, 'stopping sooner: running jobs now have this long to finish');
      // The drain waits on the next slot: woken, it reads the new deadline.
      this.#slots.wake();
    }
    return this.#stopping;
  }

  /** True while jobs may be taken (state `ready`). */
  get #taking(): boolean {
    return this.#lifecycle.state === 'ready';
  }

  async #drain(reason: WorkerExit['reason']): Promise<WorkerExit> {
    this.#lifecycle.move('draining');
    this.#takeController.abort();
    this.#slots.wake();
    this.#logger.info({ running: this.#runs.size, reason }, 'worker stopping: no new jobs');
    // Jobs still waiting for a slot are handed back: once the heartbeat stops listing
    // them, the platform (and the harness) puts them back in the queue.
    this.#pending.length = 0;
    this.#heldJobs.changed();
    if (this.#runs.size > 0) {
      const drained = await this.#waitForRunsUntil(() => this.#runsDeadline);
      if (!drained) {
        this.#logger.warn({ running: this.#runs.size }, 'drain deadline passed: aborting running jobs');
        for (const run of this.#runs.values()) run.abort('shutdown');
      }
    }
    await this.#waitForRuns(this.#config.timeoutGraceMs + 1_000);
    await this.#loop;
    this.#unsubscribeStop();
    this.#heldJobs.flush();
    await this.#transport.close().catch((error: unknown) => this.#logger.warn({ err: error }, 'transport close failed'));
    const result: WorkerExit = { reason, exitCode: reason === 'shutdown' ? 0 : 1 };
    this.#lifecycle.move('stopped');
    this.#resolveExit(result);
    return this.#exit;
  }

  async #takeLoop(): Promise<void> {
    while (this.#taking) {
      const free = this.#limit - this.#slotsInUse;
      if (free <= 0) {
        await this.#slots.next();
        continue;
      }
      const next = this.#pending.shift();
      if (next) {
        this.#startRun(next);
        continue;
      }
      let jobs: Job[];
      try {
        jobs = await this.#transport.take({ max: free, inProgress: this.#runs.size > 0, signal: this.#takeController.signal });
      } catch (error) {
        if (!this.#taking) break;
        this.#logger.warn({ err: error }, 'taking jobs failed; trying again shortly');
        await sleep(TAKE_ERROR_BACKOFF_MS, this.#takeController.signal, this.#clock);
        continue;
      }
      if (!this.#taking) {
        // Taken during shutdown: they must not be lost. Run them; stop() waits for runs.
        for (const job of jobs) this.#startRun(job);
        break;
      }
      const fresh = notHeld(jobs, this.#runs, this.#logger); // a job held already is not run twice
      for (const job of fresh) {
        if (this.#slotsInUse < this.#limit) this.#startRun(job);
        else this.#pending.push(job);
      }
      if (this.#pending.length > 0) this.#heldJobs.changed();
      if (jobs.length > 0 && fresh.length === 0) await this.#slots.next(); // nothing new: wait for a run to move
    }
  }

  #startRun(job: Job): void {
    const startedAt = this.#clock.now();
    this.#runDeps ??= {
      handler: this.#handler,
      config: this.#config,
      transport: this.#transport,
      logger: this.#logger,
      origin: this.#origin,
      clock: this.#clock,
    };
    const run = new JobRun(job, this.#runDeps);
    const earlyStop = this.#earlyStops.takeFor(job);
    if (earlyStop !== undefined) {
      this.#logger.info({ requestId: job.id, reason: earlyStop, attempt: job.attempt }, 'stop requested by the platform before the job started');
      run.abort(earlyStop);
    }
    const key = runKey(job.id, job.attempt);
    this.#runs.set(key, run);
    this.#heldJobs.changed();
    this.#events.onJobStart?.(job);
    // On the watchdog's board before the handler runs: a handler may block at once.
    const watched = this.#jobWatch?.watch(job.id, run.deadline, startedAt, job.attempt) ?? -1;
    // Once the handler settled, before its result is posted (JobRun.run): off the board, and its slot
    // free, unless the result asks for a new worker (refreshWorker, a handler that ignored its abort).
    const settled = (unresponsive: boolean): void => {
      if (watched >= 0) this.#jobWatch?.unwatch(watched);
      if (!unresponsive && !this.#config.refreshWorker && this.#posting.settled(key, this.#limit)) this.#slots.wakeAfterThisTurn();
    };
    // Inside the job's scope: a stray error the handler leaves behind names this job (stray-errors.ts).
    const scope: JobScope = { jobId: job.id, attempt: job.attempt, ended: false };
    void jobScope
      .run(scope, () => run.run(settled))
      .then((outcome) => {
        scope.ended = true;
        this.#finishRun(job, outcome);
      });
  }

  #finishRun(job: Job, outcome: RunOutcome): void {
    const key = runKey(job.id, job.attempt);
    this.#runs.delete(key);
    this.#posting.ended(key, this.#limit);
    this.#transport.runEnded?.(job);
    this.#completed++;
    this.#heldJobs.changed();
    try {
      this.#events.onJobEnd?.(job, outcome);
    } catch (error) {
      this.#logger.warn({ err: error }, 'onJobEnd listener failed');
    }
    if (outcome.unresponsive) {
      this.#logger.error(
        { requestId: job.id, graceMs: this.#config.timeoutGraceMs },
        'handler ignored its abort signal: this worker stops taking jobs and exits so that the platform can replace it',
      );
      void this.stop('unresponsive-handler');
    }
    this.#limit = currentConcurrency(this.#config, { running: this.#slotsInUse, current: this.#limit });
    this.#slots.wakeAfterThisTurn();
  }

  #sendHeldJobs(): void {
    const held = new Set<string>();
    for (const run of this.#runs.values()) held.add(run.job.id);
    for (const job of this.#pending) held.add(job.id);
    this.#transport.setJobsInProgress([...held]);
  }

  /** True once no job runs; false when `timeoutMs` passed first. */
  #waitForRuns(timeoutMs: number): Promise<boolean> {
    const deadline = this.#clock.now() + timeoutMs;
    return this.#waitForRunsUntil(() => deadline);
  }

  /** True once no job runs; false when the deadline (read again after each wake: it may move) passed first. */
  async #waitForRunsUntil(deadline: () => number): Promise<boolean> {
    while (this.#runs.size > 0) {
      const left = deadline() - this.#clock.now();
      if (left <= 0) return false;
      if (Number.isFinite(left)) await withinTime(this.#slots.next(), left, undefined, this.#clock);
      else await this.#slots.next();
    }
    return true;
  }
}
