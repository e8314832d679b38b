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
import type { JobWatch } from '../transports/watchdog/index.js';
import { afterThisTurn } from './after-this-turn.js';
import { notHeld } from './handed-again.js';
import { reportedHostname } from './error-payload.js';
import type { Handler } from './handler.js';
import type { ErrorOrigin } from './error-payload.js';
import { JobRun, type JobRunDeps, type RunOutcome } from './job-run.js';
import { Lifecycle, type LifecycleListener, type LifecycleState } from './lifecycle-state.js';
import { currentConcurrency, type WorkerConfig } from './options.js';
import { PostingRuns } from './posting-runs.js';
import { jobScope, type JobScope } from './stray-errors.js';

/** Why the runtime stopped, and the process exit code that goes with it. */
export interface WorkerExit {
  /** `harness-gone`: the harness that launched this worker is gone (local/harness-gone.ts). */
  readonly reason: 'shutdown' | 'unresponsive-handler' | 'harness-gone';
  /** 0 after a clean shutdown; 1 when a handler ignored its abort (the worker must be replaced) or its harness is gone. */
  readonly exitCode: number;
}

export interface StopOptions {
  /**
   * How long running jobs may take to finish (their results to land) before they are
   * aborted, ms; default `shutdownTimeoutMs`; `Infinity`: never aborted (the caller ends
   * the process itself). A later stop with a shorter time shortens the wait under way.
   */
  readonly runsWithinMs?: number;
}

export interface WorkerRuntimeEvents {
  /** A job ended (any way); for logs, metrics and tests. */
  onJobEnd?: (job: Job, outcome: RunOutcome) => void;
  /** A job started. */
  onJobStart?: (job: Job) => void;
}

export interface WorkerRuntimeOptions {
  /**
   * The deadline watchdog off the main thread: each running job's deadline goes on it
   * before the handler is called. Default none (a handler that blocks the event loop
   * is then never timed out).
   */
  readonly jobWatch?: JobWatch;
  /**
   * Time for the runs (execution timeouts, grace, durations) and the shutdown wait;
   * default the system clock. A test's ManualClock moves them all; the deadline
   * watchdog (`jobWatch`) judges on real time, so give it only with the system clock.
   */
  readonly clock?: Clock;
}

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
  /** Runs by job id and attempt (runKey), those posting their result too: two attempts of one job can run side by side. */
  readonly #runs = new Map<string, JobRun>();
  /** Runs of #runs posting their result in the background: they hold no slot. */
  readonly #posting = new PostingRuns();
  /** Jobs a transport answered beyond the free slots: run as slots free, never more at once. */
  readonly #pending: Job[] = [];
  readonly #takeController = new AbortController();
  readonly #lifecycle = new Lifecycle();
  #limit: number;
  #slotWaiters: Array<() => void> = [];
  #loop: Promise<void> | undefined;
  readonly #exit: Promise<WorkerExit>;
  #resolveExit!: (exit: WorkerExit) => void;
  #stopping: Promise<WorkerExit> | undefined;
  /** While stopping: when running jobs are aborted (epoch ms on the clock; Infinity: never). */
  #runsDeadline = Number.POSITIVE_INFINITY;
  #unsubscribeStop: () => void = () => {};
  #completed = 0;
  /** The wake-up of the slot waiters queued for after this turn (#wakeAfterThisTurn). */
  #slotWake: NodeJS.Immediate | undefined;
  /** What every run shares, made once. */
  #runDeps: JobRunDeps | undefined;
  /** Where the held-jobs report of this turn stands (see #reportHeldJobs). */
  #heldReport: 'none' | 'sent' | 'queued' = 'none';

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
      for (const run of this.#runs.values()) {
        // A stop that names an attempt stops only that one; the platform's stop every run of the job.
        if (run.job.id !== jobId || (attempt !== undefined && run.job.attempt !== undefined && run.job.attempt !== attempt)) continue;
        this.#logger.info({ requestId: jobId, reason, attempt: run.job.attempt }, 'stop requested by the platform');
        run.abort(reason);
      }
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
      this.#wakeSlotWaiters();
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
    this.#wakeSlotWaiters();
    this.#logger.info({ running: this.#runs.size, reason }, 'worker stopping: no new jobs');
    // Jobs still waiting for a slot are handed back: once the heartbeat stops listing
    // them, the platform (and the harness) puts them back in the queue.
    this.#pending.length = 0;
    this.#reportHeldJobs();
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
    this.#flushHeldJobs();
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
        await this.#nextSlot();
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
      if (this.#pending.length > 0) this.#reportHeldJobs();
      if (jobs.length > 0 && fresh.length === 0) await this.#nextSlot(); // nothing new: wait for a run to move
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
    const key = runKey(job.id, job.attempt);
    this.#runs.set(key, run);
    this.#reportHeldJobs();
    this.#events.onJobStart?.(job);
    // On the watchdog's board before the handler runs: a handler may block at once.
    const watched = this.#jobWatch?.watch(job.id, run.deadline, startedAt, job.attempt) ?? -1;
    // Once the handler settled, before its result is posted (JobRun.run): off the board, and its slot
    // free, unless the result asks for a new worker (refreshWorker, a handler that ignored its abort).
    const settled = (unresponsive: boolean): void => {
      if (watched >= 0) this.#jobWatch?.unwatch(watched);
      if (!unresponsive && !this.#config.refreshWorker && this.#posting.settled(key, this.#limit)) this.#wakeAfterThisTurn();
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
    this.#reportHeldJobs();
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
    this.#wakeAfterThisTurn();
  }

  /** Wake the slot waiters after this turn: the runs that end or settle in the same turn free their slots first, and one take asks for all (at concurrency 64 a take a job was a third of the worker's HTTP requests). */
  #wakeAfterThisTurn(): void {
    if (this.#slotWake !== undefined) return;
    this.#slotWake = afterThisTurn(() => {
      this.#slotWake = undefined;
      this.#wakeSlotWaiters();
    });
  }

  /**
   * Every job this worker holds goes into the heartbeat, those waiting for a slot
   * too: the harness requeues a held job that the heartbeat leaves out.
   */
  #reportHeldJobs(): void {
    // The list is built at most twice per turn of the event loop: at once for the first
    // change (a handler may block the loop right after it starts), then once after the
    // turn for the changes that followed. Built per change, a worker with 256 jobs in
    // flight spent 6 % of its CPU building sets of 256 ids.
    if (this.#heldReport === 'queued') return;
    if (this.#heldReport === 'sent') {
      this.#heldReport = 'queued';
      afterThisTurn(() => this.#flushHeldJobs());
      return;
    }
    this.#heldReport = 'sent';
    this.#sendHeldJobs();
    afterThisTurn(() => {
      if (this.#heldReport === 'sent') this.#heldReport = 'none';
    });
  }

  /** Send the report still queued for this turn, if any. */
  #flushHeldJobs(): void {
    if (this.#heldReport !== 'queued') return;
    this.#heldReport = 'none';
    this.#sendHeldJobs();
  }

  #sendHeldJobs(): void {
    const held = new Set<string>();
    for (const run of this.#runs.values()) held.add(run.job.id);
    for (const job of this.#pending) held.add(job.id);
    this.#transport.setJobsInProgress([...held]);
  }

  #nextSlot(): Promise<void> {
    return new Promise((resolve) => this.#slotWaiters.push(resolve));
  }

  #wakeSlotWaiters(): void {
    const waiters = this.#slotWaiters;
    this.#slotWaiters = [];
    for (const wake of waiters) wake();
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
      if (Number.isFinite(left)) await withinTime(this.#nextSlot(), left, undefined, this.#clock);
      else await this.#nextSlot();
    }
    return true;
  }
}
