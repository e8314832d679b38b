/**
 * @module harness/launcher/launched-worker
 * One worker the launcher started, whatever runs it (a process or a container: see
 * launch-backend.ts): what the scaler knows of it (readiness, last job, stopping) and a
 * stop that sends SIGTERM, waits the shutdown deadline, then sends SIGKILL.
 */
import type { Clock, TimerHandle } from 'serverless-worker/internal';
import type { LaunchedWorkerState } from './scale-decision.js';
import type { WorkerExit, WorkerRunner } from './launch-backend.js';

export interface LaunchedWorkerOptions {
  id: string;
  endpointId: string;
  /** The template's imageName this worker stands in for. */
  imageName: string;
  /** The endpoint version (release) it was started for. */
  version: number;
  /** What it was started with that a settings change would alter (launch-key.ts): a worker whose key differs from the endpoint's now is rolled. */
  launchKey: string;
  /** Starts the worker (a backend's start): called once, by the constructor. */
  run(): WorkerRunner;
  /** GPUs given to this worker (returned to the pool on exit). */
  gpus: readonly string[];
  /** Epoch ms on the harness clock. */
  spawnedAt: number;
  /** The harness clock: the SIGKILL after a stop's deadline waits on it. */
  clock: Clock;
  onExit(exit: WorkerExit): void;
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
  readonly #runner: WorkerRunner;
  /** It exited and its output was read to the end. */
  #closed = false;
  #killTimer: TimerHandle | undefined;
  readonly #clock: Clock;
  readonly exited: Promise<void>;

  constructor(options: LaunchedWorkerOptions) {
    this.id = options.id;
    this.endpointId = options.endpointId;
    this.imageName = options.imageName;
    this.version = options.version;
    this.launchKey = options.launchKey;
    this.gpus = options.gpus;
    this.spawnedAt = options.spawnedAt;
    this.#clock = options.clock;
    this.#runner = options.run();
    this.exited = this.#runner.exited.then((exit) => {
      this.#closed = true;
      this.#killTimer?.cancel();
      options.onExit(exit);
    });
  }

  /** How the launcher's lines name it: `pid 1234`, `container serverless-worker-ep-1-3f2a`. */
  get label(): string {
    return this.#runner.label;
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
    this.#killTimer = this.#clock.setTimer(deadlineMs, () => {
      // A container that exited on SIGTERM may still be being removed: not killed.
      this.killed = !this.#closed && this.#runner.running;
      this.#signal('SIGKILL');
    });
  }

  /** SIGKILL at once. */
  kill(): void {
    this.stopping = true;
    this.#signal('SIGKILL');
  }

  #signal(signal: 'SIGTERM' | 'SIGKILL'): void {
    if (!this.#closed) this.#runner.signal(signal);
  }
}
