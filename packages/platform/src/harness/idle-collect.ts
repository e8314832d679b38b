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
 * Or RELEASED_JOBS_TO_COLLECT jobs released, however small (issue 46 item 3): the finished
 * `/runsync` jobs of a burst expire a minute after it, and after 20 000 of them their
 * records (about 1.5 KB each) were 30 MB of garbage in the heap of `--serve-api`'s process
 * that nothing collected for another minute or more: V8 runs no full collection in an idle
 * process, and the SDK's idle compaction (src/local/idle-compaction.ts) had already run its
 * full step after the burst. Then the look also waits until no job was deleted since the
 * last one: the jobs of a burst expire over as long as the burst took, and a collection in
 * the middle of that sweep would leave the other half behind.
 *
 * A collection is V8's memory-reducing kind (collectForMemory, metrics/garbage-collector.ts:
 * from Node 22 a "last resort" full collection, which compacts every page and gives back the
 * pages V8 keeps pooled; two plain ones on Node 20, the second moving what the first left on
 * sparse pages). Two regular ones left 12 MB of pooled pages in the local API's process after the
 * expiry of 20 000 `/runsync` jobs on Node 24 (bench/README, issue 46: the collection after the
 * expiry). A purge's large bodies go with the first.
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
import {
  collectForMemory,
  exposedCollector,
  jobsDeletedSoFar,
  onRequestBytesReleased,
  systemClock,
  type Collector,
  type TimerHandle,
} from 'serverless-worker/internal';

/** Released request bytes that make a collection worth asking for. */
export const RELEASED_BYTES_TO_COLLECT = 64 * 1024 * 1024;
/** Released jobs that make a collection worth asking for (once the store stopped deleting). */
export const RELEASED_JOBS_TO_COLLECT = 10_000;
/** How often to look whether the loop is idle, ms. */
export const IDLE_CHECK_MS = 2_000;
/** The loop counts as idle when it was busy less than this share of the last look's time. */
export const IDLE_UTILIZATION = 0.1;

/** Node's gc(), without --expose-gc on the command line (the SDK's idle compaction gets it the same way); undefined where it cannot be had. */
export function exposedGc(): Collector | undefined {
  return exposedCollector();
}

export interface IdleCollector {
  /** Collections run so far (each a memory-reducing one: collectForMemory). */
  readonly collections: number;
  stop(): void;
}

/** Collect once RELEASED_BYTES_TO_COLLECT or RELEASED_JOBS_TO_COLLECT were released and the loop is idle; `gc` defaults to Node's own. */
export function collectWhenIdle(gc: Collector | undefined = exposedGc()): IdleCollector {
  let released = 0;
  let releasedJobs = 0;
  let collections = 0;
  let timer: TimerHandle | undefined;
  let last = performance.eventLoopUtilization();
  let deletedAtLast = jobsDeletedSoFar();
  const look = (): void => {
    timer = undefined;
    const now = performance.eventLoopUtilization();
    const busy = performance.eventLoopUtilization(now, last).utilization;
    last = now;
    // Many small jobs (not a large release): wait for the sweep deleting them to end.
    const sweeping = released < RELEASED_BYTES_TO_COLLECT && jobsDeletedSoFar() !== deletedAtLast;
    if (busy >= IDLE_UTILIZATION || sweeping) {
      arm();
      return;
    }
    released = 0;
    releasedJobs = 0;
    collections++;
    if (gc !== undefined) collectForMemory(gc);
  };
  const arm = (): void => {
    if (timer !== undefined) return;
    last = performance.eventLoopUtilization();
    deletedAtLast = jobsDeletedSoFar();
    timer = systemClock.setTimer(IDLE_CHECK_MS, look);
  };
  const unsubscribe = gc
    ? onRequestBytesReleased((bytes, jobs) => {
        released += bytes;
        releasedJobs += jobs;
        if (released >= RELEASED_BYTES_TO_COLLECT || releasedJobs >= RELEASED_JOBS_TO_COLLECT) arm();
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
