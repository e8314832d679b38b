/**
 * @module harness/launcher/crash-backoff
 * Backoff after worker crashes, per endpoint. Each crash in a row doubles the wait
 * before the next start (from `baseMs` up to `maxMs`); `unhealthyAfter` crashes in a
 * row during start-up (the worker exited before it ever called the harness) mark the
 * endpoint unhealthy. A worker that reaches the harness resets both.
 */

export interface CrashBackoffSettings {
  /** Wait after the first crash, ms; default 1000. */
  baseMs: number;
  /** Longest wait, ms; default 30 000. */
  maxMs: number;
  /** Start-up crashes in a row that make the endpoint unhealthy; default 3. */
  unhealthyAfter: number;
}

export const DEFAULT_CRASH_BACKOFF: CrashBackoffSettings = { baseMs: 1_000, maxMs: 30_000, unhealthyAfter: 3 };

export class CrashBackoff {
  readonly #settings: CrashBackoffSettings;
  #crashes = 0;
  #startupCrashes = 0;
  #nextStartAt = 0;

  constructor(settings: CrashBackoffSettings = DEFAULT_CRASH_BACKOFF) {
    this.#settings = settings;
  }

  /** A worker exited on its own at `now`; `duringStartup`: before it ever called. Answers the wait, ms. */
  recordCrash(now: number, duringStartup: boolean): number {
    this.#crashes++;
    if (duringStartup) this.#startupCrashes++;
    const wait = Math.min(this.#settings.maxMs, this.#settings.baseMs * 2 ** (this.#crashes - 1));
    this.#nextStartAt = now + wait;
    return wait;
  }

  /** A worker reached the harness: the endpoint's command works. */
  recordHealthyStart(): void {
    this.#crashes = 0;
    this.#startupCrashes = 0;
    this.#nextStartAt = 0;
  }

  /** Whether no worker may start at `now`. */
  blocked(now: number): boolean {
    return now < this.#nextStartAt;
  }

  /** Epoch ms of the next allowed start (0: now). */
  get nextStartAt(): number {
    return this.#nextStartAt;
  }

  get startupCrashes(): number {
    return this.#startupCrashes;
  }

  /** Whether start-up crashed `unhealthyAfter` times in a row. */
  get unhealthy(): boolean {
    return this.#startupCrashes >= this.#settings.unhealthyAfter;
  }
}
