/**
 * @module clock/sleep
 * An abortable wait on a clock, and a wait for a promise with a time limit.
 */
import { systemClock, type Clock } from './clock.js';

/**
 * Resolve after `ms` on `clock`, or at once when `signal` aborts (never rejects). The
 * wait keeps the process alive (a worker's poll gap may be all that is pending).
 */
export function sleep(ms: number, signal?: AbortSignal, clock: Clock = systemClock): Promise<void> {
  if (ms <= 0 || signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      timer.cancel();
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = clock.setTimer(ms, done, { keepAlive: true });
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * Settle like `promise`, or resolve with `expired` once `ms` passed on `clock` first.
 * The timer is cancelled either way; it keeps the process alive unless `keepAlive` is false.
 */
export async function withinTime<T, E>(promise: Promise<T>, ms: number, expired: E, clock: Clock = systemClock, keepAlive = true): Promise<T | E> {
  let timer: { cancel(): void } | undefined;
  try {
    return await Promise.race([promise, new Promise<E>((resolve) => (timer = clock.setTimer(ms, () => resolve(expired), { keepAlive })))]);
  } finally {
    timer?.cancel();
  }
}
