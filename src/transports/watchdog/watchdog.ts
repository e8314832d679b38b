/**
 * @module transports/watchdog/watchdog
 * The main thread's side of the watchdog thread (watchdog-thread.ts): it starts the
 * thread from its file, advances the liveness tick on a timer, writes each running
 * job's deadline on the shared JobBoard (no message per job), and sends the heartbeat
 * its job list.
 *
 * The job list for the heartbeat changes twice per job; telling the thread each time
 * cost a busy worker more CPU than running its jobs (a structured clone and a wake-up
 * of the thread per message). A change is sent at once when none was sent in the last
 * gap (a tenth of the ping interval, at most `JOBS_UPDATE_GAP_MS`), else once at the end
 * of that gap with the latest list: a ping may show a list at most that old. Deadlines do
 * not wait for that: they are on the board before the handler is called.
 */
import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import { systemClock, repeatEvery, type TimerHandle } from '../../clock/index.js';
import { JobBoard } from './job-board.js';
import { resolveThreadFile, type ThreadFile } from './thread-file.js';
import type { FireAction, FromThreadMessage, HeartbeatSettings, ToThreadMessage, WatchdogThreadData } from './thread-protocol.js';

/**
 * Longest wait between a job-list change and its update to the thread, ms; the wait is
 * a tenth of the ping interval up to this (the harness allows a job several ping
 * intervals to show up in a heartbeat). Each update costs a structured clone and a
 * wake-up of the thread, which in a busy worker measured 2 ms of the main thread's CPU
 * apiece (bench/README.md, issue 19): 20 a second were 4 % of a core.
 */
export const JOBS_UPDATE_GAP_MS = 1_000;
/** How often the main thread advances its tick, ms. */
export const TICK_INTERVAL_MS = 100;
/** The main thread counts as blocked once its tick has stood still this long, ms. */
export const STALE_AFTER_MS = 1_000;
/** How often the thread looks at the board, ms. */
export const CHECK_INTERVAL_MS = 100;
/**
 * Ticks with no job watched before the main thread and the thread rest (no tick, no
 * check: an idle worker wakes up for neither); the next watched job wakes both. A few
 * ticks, so that back-to-back jobs do not switch them on and off per job.
 */
export const IDLE_TICKS_BEFORE_REST = 10;
/** After reporting, how long `process.exit(1)` may take before SIGKILL, ms. */
export const EXIT_WAIT_MS = 3_000;
/** Longest wait for the thread to come up before `ready` resolves anyway, ms. */
export const READY_WAIT_MS = 15_000;
/** Jobs watched at once when the concurrency gives no number. */
export const DEFAULT_WATCH_SLOTS = 256;

/** What the worker runtime needs of a watchdog: deadlines of running jobs. */
export interface JobWatch {
  /**
   * Watch a running job (deadline and start, epoch ms; its attempt when it carried one)
   * until `unwatch`; answers a handle (-1: not watched, see JobBoard.claim).
   */
  watch(jobId: string, deadlineAt: number, startedAt?: number, attempt?: number): number;
  unwatch(handle: number): void;
  /** Called once when the watchdog fired (seen on the next tick, if the main thread runs again). */
  onFired(listener: () => void): () => void;
}

export interface WatchdogOptions {
  readonly logger: Logger;
  /** Jobs watched at once; default DEFAULT_WATCH_SLOTS. */
  readonly slots?: number;
  /** timeoutGraceMs of the worker. */
  readonly timeoutGraceMs: number;
  /** The platform heartbeat; none in local modes. */
  readonly heartbeat?: HeartbeatSettings;
  /** While the main thread is blocked longer than this, the heartbeat lists no job, ms; none: always. */
  readonly blockedUnclaimMs?: number;
  /** What to do when a blocked job passes its deadline plus grace; none: the heartbeat only. */
  readonly fire?: FireAction;
  readonly origin: WatchdogThreadData['origin'];
  /** Log lines of the thread as JSON (platform) or text; default true. */
  readonly jsonLogs?: boolean;
  /** Called once per failed ping. */
  readonly onPingFailure?: (failure: Omit<Extract<FromThreadMessage, { type: 'failure' }>, 'type'>) => void;
  /** The thread file; default found beside this module (thread-file.ts). */
  readonly threadFile?: ThreadFile;
}

export class Watchdog implements JobWatch {
  readonly board: JobBoard;
  readonly #options: WatchdogOptions;
  readonly #firedListeners = new Set<() => void>();
  #thread: Worker | undefined;
  /**
   * Real time, never a test's clock: the thread reads the board's ticks and deadlines on
   * its own Date.now (watchdog-thread.ts), so this side must tick and date on the same.
   */
  readonly #clock = systemClock;
  #ticker: TimerHandle | undefined;
  /** Ticks in a row that found no job watched (see IDLE_TICKS_BEFORE_REST). */
  #idleTicks = 0;
  #jobIds: readonly string[] = [];
  #unsent = false;
  #lastSentAt = Number.NEGATIVE_INFINITY;
  #sendTimer: TimerHandle | undefined;
  #started = false;
  #stopped = false;
  #firedSeen = false;
  #unwatchedLogged = false;
  #ready: Promise<void> = Promise.resolve();

  constructor(options: WatchdogOptions) {
    this.#options = options;
    this.board = new JobBoard(options.slots ?? DEFAULT_WATCH_SLOTS);
  }

  /** Whether the thread runs. */
  get running(): boolean {
    return this.#thread !== undefined;
  }

  /**
   * Resolves when the first take may go: at once for a compiled thread file, which
   * boots on a thread of its own whatever the main thread does (a handler that blocks
   * the loop right after the first take is still watched and its job still pinged
   * once the thread is up, a few tens of ms later: test/bundle); for a TypeScript file
   * (tsx, from src/), once the thread is up and pinging (or failed, or READY_WAIT_MS
   * passed), since loading its TypeScript can take seconds. Waiting for a compiled
   * thread's boot cost about a quarter of a bundled worker's cold start.
   */
  get ready(): Promise<void> {
    return this.#ready;
  }

  /** Start the thread (once). Answers false when its file is missing (then nothing is watched). */
  start(): boolean {
    if (this.#started || this.#stopped) return this.#thread !== undefined;
    this.#started = true;
    const { logger } = this.#options;
    const file = this.#options.threadFile ?? resolveThreadFile();
    if (!file) {
      logger.error('the watchdog thread file (watchdog-thread.js) is not beside the package code: no heartbeat and no deadline watchdog');
      return false;
    }
    this.board.tick();
    const data: WatchdogThreadData = {
      board: this.board.buffer,
      timeoutGraceMs: this.#options.timeoutGraceMs,
      checkIntervalMs: CHECK_INTERVAL_MS,
      staleAfterMs: STALE_AFTER_MS,
      exitWaitMs: EXIT_WAIT_MS,
      origin: this.#options.origin,
      jsonLogs: this.#options.jsonLogs ?? true,
      ...(this.#options.heartbeat ? { heartbeat: this.#options.heartbeat } : {}),
      ...(this.#options.blockedUnclaimMs !== undefined ? { blockedUnclaimMs: this.#options.blockedUnclaimMs } : {}),
      ...(this.#options.fire ? { fire: this.#options.fire } : {}),
    };
    const thread = new Worker(file.bootstrap ?? file.url, {
      eval: file.bootstrap !== undefined,
      workerData: data,
      // No loaders or flags of the main process (tsx, inspect) in the thread.
      execArgv: [],
      name: 'serverless-worker-watchdog',
      stdout: false,
      stderr: false,
    });
    // The thread must never keep a finished worker process alive.
    thread.unref();
    let up: () => void = () => {};
    if (file.bootstrap !== undefined)
      this.#ready = new Promise<void>((resolve) => {
        const timer = this.#clock.setTimer(READY_WAIT_MS, resolve);
        up = () => {
          timer.cancel();
          resolve();
        };
      });
    thread.on('message', (message: FromThreadMessage) => {
      if (message.type === 'failure') this.#options.onPingFailure?.(message);
      else if (message.type === 'ready') up();
    });
    thread.on('error', (error) => {
      up();
      logger.error({ err: error }, 'watchdog thread failed: no heartbeat and no deadline watchdog from now on');
    });
    thread.on('exit', () => up());
    this.#thread = thread;
    // Ticks and checks run while jobs are watched (watch() wakes them), not while the worker is idle.
    if (this.board.watched > 0 || this.#jobIds.length > 0) this.#wake();
    if (this.#jobIds.length > 0) this.#send();
    return true;
  }

  watch(jobId: string, deadlineAt: number, startedAt = this.#clock.now(), attempt?: number): number {
    const handle = this.board.claim(jobId, deadlineAt, startedAt, attempt);
    if (handle >= 0 && this.#ticker === undefined) this.#wake();
    if (handle < 0 && !this.#unwatchedLogged) {
      this.#unwatchedLogged = true;
      this.#options.logger.warn(
        { requestId: jobId, slots: this.board.size },
        'job not watched by the deadline watchdog: all its slots are taken or the job id is over 256 bytes (logged once)',
      );
    }
    return handle;
  }

  unwatch(handle: number): void {
    this.board.release(handle);
  }

  onFired(listener: () => void): () => void {
    this.#firedListeners.add(listener);
    return () => this.#firedListeners.delete(listener);
  }

  /** The jobs in progress, for the heartbeat (within JOBS_UPDATE_GAP_MS). */
  setJobs(jobIds: readonly string[]): void {
    this.#jobIds = [...jobIds];
    this.#unsent = true;
    if (jobIds.length > 0 && this.#ticker === undefined) this.#wake();
    if (!this.#thread || this.#sendTimer || !this.#options.heartbeat) return;
    const gap = Math.min(JOBS_UPDATE_GAP_MS, this.#options.heartbeat.intervalMs / 10);
    const wait = this.#lastSentAt + gap - this.#clock.now();
    if (wait <= 0) {
      this.#send();
      return;
    }
    // A pending update must never keep a finished worker process alive either (an unref'd timer).
    this.#sendTimer = this.#clock.setTimer(wait, () => this.#send());
  }

  /** Stop the thread. Once it has fired, it is left to end the process. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#sendTimer?.cancel();
    this.#sendTimer = undefined;
    this.#ticker?.cancel();
    const thread = this.#thread;
    this.#thread = undefined;
    if (!thread || this.board.fired) return;
    thread.postMessage({ type: 'stop' } satisfies ToThreadMessage);
    await thread.terminate().catch(() => 0);
  }

  /** A job is watched: tick now and every TICK_INTERVAL_MS, and have the thread check the board. */
  #wake(): void {
    if (!this.#thread || this.#stopped || this.#ticker) return;
    this.#idleTicks = 0;
    this.board.tick();
    this.#ticker = repeatEvery(this.#clock, TICK_INTERVAL_MS, () => this.#tick());
    this.#thread.postMessage({ type: 'watching', on: true } satisfies ToThreadMessage);
  }

  /** No job watched for a while: no tick, no check until the next one. */
  #rest(): void {
    this.#ticker?.cancel();
    this.#ticker = undefined;
    this.#thread?.postMessage({ type: 'watching', on: false } satisfies ToThreadMessage);
  }

  #tick(): void {
    this.board.tick();
    // Jobs running unwatched (every slot taken, an id too long) still need the tick: the heartbeat lists them only while it moves.
    if (this.board.watched > 0 || this.#jobIds.length > 0) this.#idleTicks = 0;
    else if (++this.#idleTicks >= IDLE_TICKS_BEFORE_REST && !this.board.fired) {
      this.#rest();
      return;
    }
    if (this.#firedSeen || !this.board.fired) return;
    this.#firedSeen = true;
    for (const listener of this.#firedListeners) {
      try {
        listener();
      } catch (error) {
        this.#options.logger.warn({ err: error }, 'watchdog fired listener failed');
      }
    }
  }

  #send(): void {
    this.#sendTimer?.cancel();
    this.#sendTimer = undefined;
    if (!this.#thread || !this.#unsent) return;
    this.#unsent = false;
    this.#lastSentAt = this.#clock.now();
    // postMessage clones the list, so later changes to #jobIds cannot reach the thread unsent.
    this.#thread.postMessage({ type: 'jobs', ids: this.#jobIds } satisfies ToThreadMessage);
  }
}
