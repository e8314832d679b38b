/**
 * @module local/supervisor
 * The worker of `--serve-api` as a supervised child process: the same script, run by
 * the same Node with the same loader flags, in platform mode, joined to this process's
 * harness over the worker API (RUNPOD_WEBHOOK_* of the loopback URL), exactly as a
 * platform worker joins the service. When it exits the supervisor puts the jobs it held
 * back in the queue at once (the harness's requeue rules: past maxRequeues they end
 * FAILED SW_REQUEUE_LIMIT) and starts another, so a handler that ignores its signal
 * (the runtime ends the process by design), blocks the loop past its deadline, or
 * calls process.exit() costs one restart, not the local API.
 *
 * Given the worker API's calls (`channel`), the child is joined over an IPC channel
 * instead (SW_SUPERVISOR_CHANNEL=ipc, child-channel.ts): jobs are pushed to it against the
 * slots it announced, and its results, progress and stream chunks are messages answered
 * by those calls in this process, with no HTTP request and no take per job. Its job-stop
 * poll stays on the worker API over HTTP; its heartbeat and the timing out of a handler that
 * blocks its event loop are this process's (child-watch.ts), so the child runs no thread for
 * them.
 *
 * The child gets its own process group (detached): Ctrl+C on a terminal reaches this
 * process only, which sends the child exactly one SIGTERM (two would make it exit at
 * once, undrained). It is told this process's pid (SW_SUPERVISOR_PID) and exits when
 * it is orphaned (supervised-child.ts); an exit of this process SIGKILLs it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Readable } from 'node:stream';
import type { Logger } from 'pino';
import {
  type Clock,
  type EndpointJobs,
  sleep,
  SUPERVISED_CHANNEL_ENV,
  SUPERVISED_CHANNEL_IPC,
  systemClock,
  type TimerHandle,
} from 'serverless-worker/internal';
import { workerEnvFor, type WorkerApiCalls } from '../harness/worker-api/index.js';
import { serveChildChannel } from './child-channel.js';
import { flagName, givenFlagNames, tieringFlagsFor } from './tiering.js';

/** The variable that tells a worker process it is supervised, with the supervisor's pid. */
export const SUPERVISOR_PID_ENV = 'SW_SUPERVISOR_PID';

/** While a child starts, how often its presence is read to see it ready, ms. */
const READY_POLL_MS = 50;
/** A child that exits before it was ever ready is started again after this, doubling, ms. */
const FIRST_BACKOFF_MS = 1_000;
const MAX_BACKOFF_MS = 30_000;

export interface SupervisorOptions {
  readonly endpoint: EndpointJobs;
  /** The harness's URL as the child reaches it (loopback). */
  readonly url: string;
  readonly apiKey?: string | undefined;
  /** RUNPOD_PING_INTERVAL: the harness's liveness interval, ms. */
  readonly pingIntervalMs: number;
  /** The worker id set by the worker's options (then every child uses it); default `local-<n>`. */
  readonly workerId?: string | undefined;
  /** How long a stopped child may drain before SIGKILL, ms. */
  readonly stopBoundMs: number;
  readonly logger: Logger;
  /** The command: default this Node, its flags (inspector flags left out: the port is this process's) and script, and its arguments. */
  readonly command?: { readonly file: string; readonly args: readonly string[] };
  /** The child's base environment; default process.env. */
  readonly env?: NodeJS.ProcessEnv;
  /** Where the child's stderr lines go: default straight to this terminal; given, the lines are piped through it. */
  readonly onStderr?: (stream: Readable) => void;
  /** The child's stdout, piped to this (what its handler prints there is a line of its job: worker/job-output.ts); else inherited. */
  readonly onStdout?: (stream: Readable) => void;
  /** The worker API's calls: given, the child's jobs and results go over its IPC channel (child-channel.ts); default HTTP alone. */
  readonly channel?: WorkerApiCalls | undefined;
  /** Times the stop bound, the ready polls and the restart backoff; default the system clock. */
  readonly clock?: Clock;
}

/** How the first child's start ended: ready for jobs, or exited first (a failed init or start-up). */
export type FirstStart = { readonly ready: true } | { readonly ready: false; readonly exitCode: number };

/**
 * V8 flags the child gets unless this process was started with its own (or NODE_OPTIONS has them): a young generation
 * of at most 2 x 2 MiB (V8's default cap is 2 x 16 MiB, which a busy worker reaches and keeps:
 * bench/README, issue 34 item 3); its collections on its own thread, not on V8's helper threads
 * as well (on Node 24, 70 s after 20 000 `/runsync` its V8 pages came to 21 MiB with it, 33 MiB
 * without, about its idle size against 12 MiB more; the same rate and CPU a request: the machine's
 * other cores are busy with the local API and the clients; bench/README, issue 46: Maglev off, the
 * child's collections on its own thread); and its functions optimized sooner, as this process's
 * are (tiering.ts; none on a V8 that does not know the flags).
 */
export const CHILD_V8_FLAGS: readonly string[] = ['--max-semi-space-size=2', '--single-threaded-gc', ...tieringFlagsFor()];

/**
 * Variables the child gets unless its environment has them: glibc's malloc arenas capped at 2
 * (by default up to 8 per core: a thread that finds the others' arenas busy makes one, and
 * they stay). With 2, the child's anonymous memory was 1.3-1.4 MiB lower idle and 70 s after
 * 20 000 /runsync, at no cost in CPU per job that the bench could tell (bench/README, issue 46
 * item 3).
 */
export const CHILD_ENV_DEFAULTS: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: '2' };

/** The child's base environment: `env`, with CHILD_ENV_DEFAULTS where it has none of its own. */
export function childBaseEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return { ...CHILD_ENV_DEFAULTS, ...env };
}

/** This process's command line for the child: inspector flags left out (their port is taken here), CHILD_V8_FLAGS added. */
export function childCommand(): { file: string; args: string[] } {
  const script = process.argv[1];
  if (script === undefined || script === '') throw new Error('--serve-api needs a worker script to run as its child process (process.argv[1] is empty)');
  const flags = process.execArgv.filter((flag) => !flag.startsWith('--inspect') && !flag.startsWith('--debug'));
  const given = givenFlagNames(flags);
  const ours = CHILD_V8_FLAGS.filter((flag) => !given.has(flagName(flag)));
  return { file: process.execPath, args: [...ours, ...flags, script, ...process.argv.slice(2)] };
}

export class WorkerSupervisor {
  readonly #options: SupervisorOptions;
  readonly #command: { readonly file: string; readonly args: readonly string[] };
  #child: ChildProcess | undefined;
  readonly #started = new Set<string>();
  #workerId = '';
  #generation = 0;
  #everReady = false;
  #backoffMs = FIRST_BACKOFF_MS;
  #stopping: Promise<number> | undefined;
  #lastExitCode = 0;
  #respawnTimer: TimerHandle | undefined;
  readonly #clock: Clock;
  #resolveFirst: ((start: FirstStart) => void) | undefined;
  readonly firstStart: Promise<FirstStart>;
  /** Children killed by restart(): their exit starts the next at once. */
  readonly #reloading = new Set<ChildProcess>();
  /** Children started so far (the first is 1). */
  get generation(): number {
    return this.#generation;
  }
  /** Whether `workerId` is one of the children this supervisor started (the dashboard's GPU job log counts their jobs). */
  started(workerId: string): boolean {
    return this.#started.has(workerId);
  }

  /** The worker id of the child running now. */
  get workerId(): string {
    return this.#workerId;
  }

  constructor(options: SupervisorOptions) {
    this.#options = options;
    this.#clock = options.clock ?? systemClock;
    this.#command = options.command ?? childCommand();
    this.firstStart = new Promise((resolve) => (this.#resolveFirst = resolve));
    process.on('exit', this.#killOnExit);
  }

  /** Start the first child. */
  start(): void {
    this.#spawn();
  }

  /**
   * A new child in place of this one (`--watch`: a source file changed): the child's
   * process group is killed at once and a new one started, which imports the changed
   * files. The harness and its jobs stay: the jobs the old child held go back to the
   * queue (counted as retried; past the endpoint's maxRequeues a job ends FAILED with
   * SW_REQUEUE_LIMIT), and queued ones wait for the new child. Nothing while stopping.
   */
  restart(reason: string): void {
    if (this.#stopping !== undefined) return;
    const child = this.#child;
    this.#options.logger.info({ reason, workerId: this.#workerId }, 'restarting the worker process');
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) {
      // Waiting out a crash's backoff, or none started: the new one now.
      this.#respawnTimer?.cancel();
      this.#backoffMs = FIRST_BACKOFF_MS;
      this.#spawn();
      return;
    }
    this.#reloading.add(child);
    this.#killGroup(child, 'SIGKILL');
  }

  /**
   * Stop: SIGTERM to the child (it drains as a platform worker does), SIGKILL past
   * `stopBoundMs`; no new child. Answers the child's exit code (0 when none ran).
   */
  stop(): Promise<number> {
    this.#stopping ??= this.#stop();
    return this.#stopping;
  }

  async #stop(): Promise<number> {
    this.#respawnTimer?.cancel();
    const child = this.#child;
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return this.#lastExitCode;
    // A child still starting (its signal handlers not yet installed) dies of this SIGTERM itself: stopped as asked, 0.
    const exited = new Promise<number>((resolve) => child.once('exit', (code, signal) => resolve(code ?? (signal === 'SIGTERM' ? 0 : 1))));
    child.kill('SIGTERM');
    const timer = this.#clock.setTimer(
      this.#options.stopBoundMs,
      () => {
        this.#options.logger.warn({ pid: child.pid, boundMs: this.#options.stopBoundMs }, 'the worker process did not stop in time: SIGKILL');
        this.#killGroup(child, 'SIGKILL');
      },
      { keepAlive: true },
    );
    const code = await exited;
    timer.cancel();
    process.off('exit', this.#killOnExit);
    return code;
  }

  #spawn(): void {
    this.#generation++;
    const generation = this.#generation;
    this.#workerId = this.#options.workerId ?? `local-${generation}`;
    const workerId = this.#workerId;
    this.#started.add(workerId);
    const { url, endpoint, apiKey, pingIntervalMs, logger, channel } = this.#options;
    const child = spawn(this.#command.file, this.#command.args, {
      env: {
        ...childBaseEnv(this.#options.env ?? process.env),
        ...workerEnvFor(url, endpoint.id, { pingIntervalMs, ...(apiKey !== undefined ? { apiKey } : {}) }),
        RUNPOD_POD_ID: workerId,
        [SUPERVISOR_PID_ENV]: String(process.pid),
        ...(channel ? { [SUPERVISED_CHANNEL_ENV]: SUPERVISED_CHANNEL_IPC } : {}),
      },
      // Logs to this terminal (through onStdout and onStderr when given); no stdin (the platform gives none either).
      stdio: ['ignore', this.#options.onStdout ? 'pipe' : 'inherit', this.#options.onStderr ? 'pipe' : 'inherit', ...(channel ? (['ipc'] as const) : [])],
      detached: true,
    });
    this.#child = child;
    if (child.stderr) this.#options.onStderr?.(child.stderr);
    if (child.stdout) this.#options.onStdout?.(child.stdout);
    if (channel) {
      serveChildChannel(child, {
        calls: channel,
        endpointId: endpoint.id,
        workerId,
        logger,
        clock: this.#clock,
        onJobsAfterExit: () => void endpoint.requeueWorkerJobs(workerId).catch(() => []),
        pingIntervalMs,
        // Blocked past a job's deadline (that job ended TIMED_OUT): its process group goes, and a new child comes.
        onBlocked: () => this.#killGroup(child, 'SIGKILL'),
      });
    }
    logger.info(
      { workerId, pid: child.pid, generation, channel: channel ? 'ipc' : 'http' },
      generation === 1 ? 'worker process started' : 'worker process started again',
    );
    let ready = false;
    let exited = false;
    child.once('error', (error) => {
      logger.error({ err: error, workerId }, 'the worker process could not be started');
      // No process at all (no 'exit' will come): count it as one that exited at once.
      if (child.pid === undefined && !exited) {
        exited = true;
        this.#lastExitCode = 1;
        void this.#onExit(child, workerId, false, 1, null);
      }
    });
    child.once('exit', (code, signal) => {
      exited = true;
      this.#lastExitCode = code ?? 1;
      void this.#onExit(child, workerId, ready, code, signal);
    });
    // Ready once its first job-take marks it so (markReady): init, if any, is over. Until the
    // child is first heard from (its imports, a compile, can take seconds), this process
    // vouches for it: /health counts it initializing, not a missing worker with nothing to say.
    const watchReady = async (): Promise<void> => {
      while (!exited && !ready) {
        let worker = await endpoint.workers.get(workerId).catch(() => undefined);
        if (worker === undefined && this.#child === child) {
          worker = await endpoint.workers.touch(workerId, { initializing: true }).catch(() => undefined);
          // It exited meanwhile: its exit's removal may have come first; the vouching goes too.
          if (exited) await endpoint.workers.remove(workerId).catch(() => undefined);
        }
        if (worker !== undefined && !worker.initializing && this.#child === child) {
          ready = true;
          this.#everReady = true;
          this.#backoffMs = FIRST_BACKOFF_MS;
          this.#resolveFirst?.({ ready: true });
          return;
        }
        await sleep(READY_POLL_MS, undefined, this.#clock);
      }
    };
    void watchReady();
  }

  async #onExit(child: ChildProcess, workerId: string, ready: boolean, code: number | null, signal: NodeJS.Signals | null): Promise<void> {
    const { endpoint, logger } = this.#options;
    // Its jobs go back to the queue now rather than after the liveness window.
    const requeued = await endpoint.requeueWorkerJobs(workerId).catch(() => [] as string[]);
    if (this.#stopping !== undefined) return;
    if (this.#reloading.delete(child)) {
      // Asked for (restart()): the new child at once, whether or not this one was ever ready.
      logger.info(
        { workerId, requeued },
        `the worker process was restarted${requeued.length > 0 ? `; jobs it held went back to the queue (${requeued.join(', ')})` : ''}`,
      );
      this.#backoffMs = FIRST_BACKOFF_MS;
      this.#spawn();
      return;
    }
    if (!this.#everReady) {
      // The first start failed (init, a bad option): the child said why; --serve-api ends with its code.
      this.#resolveFirst?.({ ready: false, exitCode: code ?? 1 });
      return;
    }
    const delayMs = ready ? 0 : this.#backoffMs;
    if (!ready) this.#backoffMs = Math.min(this.#backoffMs * 2, MAX_BACKOFF_MS);
    logger.warn(
      { workerId, pid: child.pid, exitCode: code, signal, requeued, restartInMs: delayMs },
      `the worker process exited (${signal ?? `code ${String(code)}`}); ${requeued.length > 0 ? `jobs it held went back to the queue (${requeued.join(', ')}); ` : ''}starting a new one`,
    );
    this.#respawnTimer = this.#clock.setTimer(
      delayMs,
      () => {
        if (this.#stopping === undefined) this.#spawn();
      },
      { keepAlive: true },
    );
  }

  /** Its process group, by its pid: a handler's own children go with it. */
  #killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
    if (child.pid === undefined) return;
    try {
      process.kill(-child.pid, signal);
    } catch {
      child.kill(signal);
    }
  }

  /** This process is exiting (a second signal, an error): no child may outlive it. */
  readonly #killOnExit = (): void => {
    const child = this.#child;
    if (child !== undefined && child.exitCode === null && child.signalCode === null) this.#killGroup(child, 'SIGKILL');
  };
}
