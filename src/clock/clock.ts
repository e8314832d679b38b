/**
 * @module clock/clock
 * The one source of time and timers for every layer (worker, transports, watchdog,
 * harness, launcher, load balancing), at the bottom of the tree so that any folder may
 * import it. Parts take a `Clock` at construction (default `systemClock`) so that tests
 * drive ttl, retention, execution timeouts and poll gaps with a ManualClock instead of
 * waiting. Raw Date.now and timers appear only here (test/clock/raw-time.unit.test.ts).
 */

export interface TimerHandle {
  cancel(): void;
}

export interface TimerOptions {
  /**
   * Keep the process alive while the timer waits (Node's default for its own timers).
   * Default false: a timer alone never holds a process open (a harness or a sampler
   * must not keep a finished program running). A worker's poll gap, its execution
   * timeout and a shutdown wait set it: nothing else may hold the event loop then.
   */
  readonly keepAlive?: boolean;
}

export interface Clock {
  /** Epoch milliseconds. Durations are differences of two readings on the same clock. */
  now(): number;
  /** Call `callback` once, `delayMs` from now. */
  setTimer(delayMs: number, callback: () => void, options?: TimerOptions): TimerHandle;
}

/** Node's timers cap a delay at 2^31-1 ms (about 24.8 days); ours never exceed 7 days. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer(delayMs, callback, options) {
    const timer = setTimeout(callback, Math.min(Math.max(0, delayMs), MAX_TIMER_MS));
    if (!options?.keepAlive) timer.unref();
    return { cancel: () => clearTimeout(timer) };
  },
};

/** Run `task` every `intervalMs` on `clock` (the first run one interval from now) until the handle is cancelled. */
export function repeatEvery(clock: Clock, intervalMs: number, task: () => void, options?: TimerOptions): TimerHandle {
  let cancelled = false;
  let timer: TimerHandle | undefined;
  const arm = (): void => {
    timer = clock.setTimer(
      intervalMs,
      () => {
        if (cancelled) return;
        arm();
        task();
      },
      options,
    );
  };
  arm();
  return {
    cancel: () => {
      cancelled = true;
      timer?.cancel();
    },
  };
}
