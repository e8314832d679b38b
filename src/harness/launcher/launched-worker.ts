/**
 * @module harness/launcher/launched-worker
 * One worker process the launcher started: `/bin/sh -c COMMAND` in its own process
 * group (so a shell's children stop with it), its output read line by line, and a
 * stop that sends SIGTERM, waits the shutdown deadline, then sends SIGKILL. Signals go
 * to this worker's own process group only, by its pid.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { LaunchedWorkerState } from './scale-decision.js';

export interface LaunchedWorkerOptions {
  id: string;
  endpointId: string;
  /** The template's imageName this worker stands in for. */
  imageName: string;
  /** The endpoint version (release) it was started for. */
  version: number;
  /** What it was started with that a settings change would alter (launch-key.ts): a worker whose key differs from the endpoint's now is rolled. */
  launchKey: string;
  command: string;
  env: NodeJS.ProcessEnv;
  /** Working directory; default the harness's. */
  cwd?: string;
  /** GPUs given to this worker (returned to the pool on exit). */
  gpus: readonly string[];
  /** Epoch ms on the harness clock. */
  spawnedAt: number;
  onLine(stream: 'stdout' | 'stderr', line: string): void;
  onExit(code: number | null, signal: NodeJS.Signals | null): void;
}

export class LaunchedWorker {
  readonly id: string;
  readonly endpointId: string;
  readonly imageName: string;
  readonly version: number;
  readonly launchKey: string;
  readonly gpus: readonly string[];
  readonly spawnedAt: number;
  /** Epoch ms it left initializing (its first job request, as its presence shows it); undefined while initializing. */
  readyAt: number | undefined;
  /**
   * Its presence's lastSeenAt when first seen out of initializing; readiness is confirmed
   * at the next tick (a first heartbeat creates the presence a moment before marking it initializing).
   */
  leftInitializingAt: number | undefined;
  /** Epoch ms it last took or ended a job (store events), or was seen holding one: its idle time counts from here. */
  lastJobAt: number | undefined;
  /** Jobs its presence listed at the last look (job-activity.ts counts the wait of the new ones). */
  heldSeen: ReadonlySet<string> = new Set();
  /** Set once the launcher told it to stop. */
  stopping = false;
  /** Set when it outlived the shutdown deadline and got SIGKILL. */
  killed = false;
  exitedAt: number | undefined;
  readonly #child: ChildProcess;
  /** Its output streams closed: every process of its group that held them is gone. */
  #closed = false;
  #killTimer: NodeJS.Timeout | undefined;
  readonly exited: Promise<void>;

  constructor(options: LaunchedWorkerOptions) {
    this.id = options.id;
    this.endpointId = options.endpointId;
    this.imageName = options.imageName;
    this.version = options.version;
    this.launchKey = options.launchKey;
    this.gpus = options.gpus;
    this.spawnedAt = options.spawnedAt;
    this.#child = spawn('/bin/sh', ['-c', options.command], {
      env: options.env,
      ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    for (const stream of ['stdout', 'stderr'] as const) {
      const source = this.#child[stream];
      if (source) createInterface({ input: source, crlfDelay: Infinity }).on('line', (line) => options.onLine(stream, line));
    }
    this.exited = new Promise<void>((resolve) => {
      // 'close' waits for the output streams too, so no line arrives after the exit.
      this.#child.once('close', (code, signal) => {
        this.#closed = true;
        if (this.#killTimer) clearTimeout(this.#killTimer);
        options.onExit(code, signal);
        resolve();
      });
    });
    this.#child.once('error', (error) => options.onLine('stderr', `could not start: ${error.message}`));
  }

  get pid(): number | undefined {
    return this.#child.pid;
  }

  /**
   * The state the scaler sees, given whether it holds a job now and whether its presence
   * shows it out of initializing (a view read between two launcher ticks must not call a
   * worker that already asked for a job initializing).
   */
  state(holdsJob: boolean, ready = false): LaunchedWorkerState {
    if (this.stopping) return 'stopping';
    if (this.readyAt === undefined && !ready && !holdsJob) return 'initializing';
    return holdsJob ? 'running' : 'idle';
  }

  /** SIGTERM now, SIGKILL after `deadlineMs` if it still runs. */
  stop(deadlineMs: number): void {
    if (this.stopping) return;
    this.stopping = true;
    this.#signal('SIGTERM');
    this.#killTimer = setTimeout(() => {
      this.killed = !this.#closed;
      this.#signal('SIGKILL');
    }, deadlineMs);
    this.#killTimer.unref();
  }

  /** SIGKILL at once. */
  kill(): void {
    this.stopping = true;
    this.#signal('SIGKILL');
  }

  #signal(signal: NodeJS.Signals): void {
    // Not the shell's own exit: a shell that ran the command as its child may exit on
    // SIGTERM while the command ignores it and lives on in the group; SIGKILL must still go.
    const pid = this.#child.pid;
    if (pid === undefined || this.#closed) return;
    try {
      // The worker's own process group (it was started detached): the shell and what it runs.
      process.kill(-pid, signal);
    } catch {
      // Already gone.
    }
  }
}
