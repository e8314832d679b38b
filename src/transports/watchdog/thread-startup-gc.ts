/**
 * @module transports/watchdog/thread-startup-gc
 * One full collection in the watchdog thread a second after it is up. The thread is a V8
 * isolate of its own: loading its modules leaves its heap at about 8.5 MB used (13 MB
 * committed) on Node 24, and afterwards it allocates too little for V8 to collect it again, so
 * that garbage stays for the worker's life. On Node 20 V8's memory reducer happens to collect
 * it (to about 4.3 MB); on Node 24 it does not. With this collection a platform worker held
 * about 3.5 MiB less PSS 10 s after start on Node 24 (measured as the worker child of
 * `--serve-api`, which since runs no such thread: bench/README, issue 46: every goal on Node 20,
 * 22 and 24). The collection costs a few milliseconds of the thread's
 * time, never the main thread's. The collector is V8's `gc` from a fresh context
 * (metrics/garbage-collector.ts): no global scope gets a `gc`.
 */
import { systemClock, type Clock, type TimerHandle } from '../../clock/index.js';
import { collector as v8Collector, type Collector } from '../../metrics/garbage-collector.js';

/** How long after the thread is up its start-up garbage is collected, ms. */
export const STARTUP_COLLECTION_DELAY_MS = 1_000;

/** Schedules the one collection on `clock` (its timers keep no thread alive); the handle's `cancel` calls it off. */
export function collectStartupGarbage(
  delayMs: number = STARTUP_COLLECTION_DELAY_MS,
  collector: () => Collector | undefined = v8Collector,
  clock: Clock = systemClock,
): TimerHandle {
  return clock.setTimer(delayMs, () => collector()?.());
}
