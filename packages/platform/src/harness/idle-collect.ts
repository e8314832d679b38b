/**
 * @module harness/idle-collect
 * A garbage collection once the job store has let go of a lot of request bodies and the
 * process is idle (issue 49 item 4). V8 collects when it allocates; an idle harness
 * allocates nothing, so after `purge-queue` of 13 bodies of 10 MB its RSS stayed at
 * 358-578 MB (against 124-144 MB at its start) until something else ran a collection.
 *
 * When: RELEASED_BYTES_TO_COLLECT or more released since the last collection (the memory
 * store reports what it let go of, store/released-bytes.ts), then a look every
 * IDLE_CHECK_MS until the event loop was busy under IDLE_UTILIZATION of that time: a
 * collection of a heap that is mostly garbage takes 15-65 ms (its live part is small), not
 * something to add to a burst of uploads. One collection per such release, never a timer
 * while nothing was released.
 *
 * How: Node offers gc() only with --expose-gc; `v8.setFlagsFromString('--expose-gc')` then
 * `vm.runInNewContext('gc')` gives the function without the flag on the command line (the
 * flag is set back at once, so that no later context sees a global gc). Checked on Node 20,
 * 22, 24 and 26. Where that fails, nothing is collected early (the process is as before).
 *
 * What a collection cannot do: give back what the C library keeps. From Node 22 the text
 * of a large body lives outside V8's heap (malloc), and glibc raises its mmap threshold as
 * large blocks are freed, so freed bodies stay in its arenas; `MALLOC_MMAP_THRESHOLD_=131072`
 * (and `MALLOC_ARENA_MAX=2`) in the harness's environment lets a collection return them
 * (docs/guides/local-api.md).
 */
import { performance } from 'node:perf_hooks';
import { exposedCollector, onRequestBytesReleased, systemClock, type TimerHandle } from 'serverless-worker/internal';

/** Released request bytes that make a collection worth asking for. */
export const RELEASED_BYTES_TO_COLLECT = 64 * 1024 * 1024;
/** How often to look whether the loop is idle, ms. */
export const IDLE_CHECK_MS = 2_000;
/** The loop counts as idle when it was busy less than this share of the last look's time. */
export const IDLE_UTILIZATION = 0.1;

/** Node's gc(), without --expose-gc on the command line (the SDK's idle compaction gets it the same way); undefined where it cannot be had. */
export function exposedGc(): (() => void) | undefined {
  return exposedCollector();
}

export interface IdleCollector {
  /** Collections run so far. */
  readonly collections: number;
  stop(): void;
}

/** Collect once RELEASED_BYTES_TO_COLLECT were released and the loop is idle; `gc` defaults to Node's own. */
export function collectWhenIdle(gc: (() => void) | undefined = exposedGc()): IdleCollector {
  let released = 0;
  let collections = 0;
  let timer: TimerHandle | undefined;
  let last = performance.eventLoopUtilization();
  const look = (): void => {
    timer = undefined;
    const now = performance.eventLoopUtilization();
    const busy = performance.eventLoopUtilization(now, last).utilization;
    last = now;
    if (busy >= IDLE_UTILIZATION) {
      arm();
      return;
    }
    released = 0;
    collections++;
    gc?.();
  };
  const arm = (): void => {
    if (timer !== undefined) return;
    last = performance.eventLoopUtilization();
    timer = systemClock.setTimer(IDLE_CHECK_MS, look);
  };
  const unsubscribe = gc
    ? onRequestBytesReleased((bytes) => {
        released += bytes;
        if (released >= RELEASED_BYTES_TO_COLLECT) arm();
      })
    : () => undefined;
  return {
    get collections() {
      return collections;
    },
    stop: () => {
      unsubscribe();
      timer?.cancel();
      timer = undefined;
    },
  };
}
