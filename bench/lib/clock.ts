/**
 * @module bench/lib/clock
 * A harness Clock with sub-millisecond `now()`: the job store stamps `startedAt` when
 * it hands a job out and `endedAt` when the result lands, so with this clock
 * `endedAt - startedAt` is the per-job latency the dispatch benchmark reports.
 * Timers are the system clock's (unref'd), so ttl and retention behave as usual.
 */
import { systemClock, type Clock } from '../../src/harness/index.js';

/** Epoch ms with microsecond resolution, comparable across processes of one machine. */
export function preciseNow(): number {
  return performance.timeOrigin + performance.now();
}

export const preciseClock: Clock = {
  now: preciseNow,
  setTimer: (delayMs, callback) => systemClock.setTimer(delayMs, callback),
};
