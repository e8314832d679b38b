/**
 * @module harness/launcher/scaling-loop
 * When the launcher's scaling rounds run: one every `intervalMs` while a round finds
 * something to watch (a job queued or running, a worker, a worker wanted), none at all
 * after a round that finds nothing, until `wake()` (a job queued, an endpoint changed, a
 * worker exited) runs one at once. A wake during a round counts: that round does not put
 * the loop to sleep. Where the wakes do not tell of every change (`canSleep()` false: a
 * store other processes write) it runs every `intervalMs` as it always did.
 */
import type { Clock, TimerHandle } from 'serverless-worker/internal';

export interface ScalingLoopDeps {
  clock: Pick<Clock, 'setTimer'>;
  intervalMs: number;
  /** One round; answers whether anything is left to watch (a failed round counts as yes). */
  round(): Promise<boolean>;
  /** Whether the wakes tell of every change that can give the rounds work. */
  canSleep(): boolean;
  onError(error: unknown): void;
}

export class ScalingLoop {
  readonly #deps: ScalingLoopDeps;
  #timer: TimerHandle | undefined;
  #asleep = false;
  /** A wake came since the round under way began. */
  #woken = false;
  #closed = false;
  /** The round under way, if any: close() waits for it. */
  #round: Promise<void> | undefined;
  #rounds = 0;

  constructor(deps: ScalingLoopDeps) {
    this.#deps = deps;
  }

  /** Whether no round is armed or under way until a wake. */
  get sleeping(): boolean {
    return this.#asleep;
  }

  /** How many rounds have ended (a test waits for some to have run instead of sleeping a fixed time). */
  get rounds(): number {
    return this.#rounds;
  }

  start(): void {
    void this.#run();
  }

  /** Something may give the rounds work: run one now if the loop sleeps, else keep the next one armed. */
  wake(): void {
    this.#woken = true;
    if (!this.#asleep || this.#closed) return;
    this.#asleep = false;
    this.#timer = this.#deps.clock.setTimer(0, () => void this.#run());
  }

  /** No round after this one; resolves once the round under way (if any) has ended, so nothing it decided lands after close. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#timer?.cancel();
    await this.#round;
  }

  async #run(): Promise<void> {
    if (this.#closed) return;
    this.#woken = false;
    let busy = true;
    const round = this.#deps.round().then(
      (answer) => {
        busy = answer;
      },
      (error: unknown) => this.#deps.onError(error),
    );
    this.#round = round;
    await round;
    this.#round = undefined;
    this.#rounds += 1;
    if (this.#closed) return;
    if (!busy && !this.#woken && this.#deps.canSleep()) this.#asleep = true;
    else this.#timer = this.#deps.clock.setTimer(this.#deps.intervalMs, () => void this.#run());
  }
}
