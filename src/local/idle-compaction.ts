/**
 * @module local/idle-compaction
 * Memory given back once a busy process goes quiet: both processes of `--serve-api`
 * (the local API and its supervised worker child) run this. V8 keeps the heap it grew
 * while busy (its young generation at its 16 MiB x 2 cap, old-space pages holding
 * little), and its own memory reducer did not run in the worker child in 45 s of idle
 * after 20 000 `/runsync` (bench/README, issue 34 item 3: 106 MiB, 74 MiB after one full
 * collection). So, once no garbage collection has run for `quietMs` (nothing is being
 * allocated: no jobs), and the heap grew by `minGrowthBytes` since the last compaction,
 * one full collection runs (start-up counts as work); V8 then shrinks its young
 * generation and frees the empty pages, since its allocation rate over the last 5 s is
 * low (hence `quietMs` over 5 s; a second collection when the first left the young
 * generation as it was: V8 reads that rate from the samples of its collections).
 *
 * What it costs: a busy process, a native record per collection (v8.GCProfiler) and a
 * timer every `quietMs`; an idle one, no wake-up at all (a 'gc' PerformanceObserver waits
 * for the next collection, and a process that allocates nothing collects nothing); once
 * per quiet period after work, one full collection (about 5-40 ms on these heaps). The collector
 * is V8's `gc` from a fresh context (`--expose-gc` set for that moment only): the
 * handler's global scope never gets a `gc`.
 */
import { PerformanceObserver, performance } from 'node:perf_hooks';
import { GCProfiler, getHeapSpaceStatistics, getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

export const IDLE_COMPACTION = {
  /** No collection for this long (over V8's 5 s allocation-rate window), ms. */
  quietMs: 5_500,
  /** The committed heap grew by this much since the last compaction, bytes. */
  minGrowthBytes: 4 * 1024 * 1024,
} as const;

export interface IdleCompaction {
  /** Full collections run so far. */
  readonly compactions: number;
  stop(): void;
}

/** A young generation at most this large is left as it is, bytes (V8's smallest is 1-2 MiB). */
const YOUNG_SHRUNK_BYTES = 2 * 1024 * 1024;

const youngBytes = (): number => getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.space_size ?? 0;

/** V8's full collection, without a `gc` in this context's global scope; undefined if V8 refuses. */
function fullCollector(): (() => void) | undefined {
  const exposed = typeof (globalThis as { gc?: unknown }).gc === 'function';
  try {
    setFlagsFromString('--expose-gc');
    const gc: unknown = runInNewContext('gc');
    return typeof gc === 'function' ? (gc as () => void) : undefined;
  } catch {
    return undefined;
  } finally {
    // As it was: a process started with --expose-gc keeps it.
    if (!exposed) setFlagsFromString('--no-expose-gc');
  }
}

/**
 * Start watching this process (once per process); `options` for tests.
 *
 * Two modes, so that neither a busy nor an idle process pays for the watch: idle, a 'gc'
 * PerformanceObserver (JavaScript per collection, but an idle process collects nothing)
 * whose first entry says work began; busy, a `v8.GCProfiler` (collections recorded
 * natively, no JavaScript per collection: the observer's callback, with a deprecation
 * wrapper Node 20 builds per gc entry, was about 4 % of a busy worker child's samples,
 * bench/README, issue 34 third pass) read every `quietMs`: a window without a collection
 * means the work is over.
 */
export function compactWhenIdle(options: { quietMs?: number; minGrowthBytes?: number } = {}): IdleCompaction {
  const quietMs = options.quietMs ?? IDLE_COMPACTION.quietMs;
  const minGrowthBytes = options.minGrowthBytes ?? IDLE_COMPACTION.minGrowthBytes;
  const collect = fullCollector();
  let compactions = 0;
  // 0 at first: the heap start-up grew is given back after its first quiet period.
  let baseline = 0;
  // Collections before this time are our own (their entries arrive after the call).
  let ownUntil = 0;
  let timer: NodeJS.Timeout | undefined;
  let profiler: GCProfiler | undefined;
  let stopped = false;
  const arm = (): void => {
    timer = setTimeout(check, quietMs);
    timer.unref();
  };
  /** Busy: collections counted natively until the next check. */
  const watchBusy = (): void => {
    observer.disconnect();
    profiler = new GCProfiler();
    profiler.start();
    arm();
  };
  /** Quiet: the observer waits for the next collection (none while idle: no wake-up). */
  const watchIdle = (): void => {
    profiler = undefined;
    observer.observe({ entryTypes: ['gc'] });
  };
  const check = (): void => {
    timer = undefined;
    const collections = profiler?.stop()?.statistics.length ?? 0;
    if (stopped) return;
    if (collections > 0) {
      // Still working: look again after another quiet period.
      profiler?.start();
      arm();
      return;
    }
    if (collect !== undefined && getHeapStatistics().total_heap_size - baseline >= minGrowthBytes) {
      const young = youngBytes();
      collect();
      // V8 shrinks the young generation when its allocation rate was low; that rate is read from
      // the collections' own samples, so after a busy spell it is the second collection that sees it.
      if (youngBytes() >= young && young > YOUNG_SHRUNK_BYTES) collect();
      compactions++;
      ownUntil = performance.now();
      baseline = getHeapStatistics().total_heap_size;
    }
    watchIdle();
  };
  const observer = new PerformanceObserver((list) => {
    if (stopped || profiler !== undefined) return;
    if (list.getEntries().some((entry) => entry.startTime >= ownUntil)) watchBusy();
  });
  if (collect !== undefined) {
    // Start-up counts as work: a process that collects nothing after it (its young generation
    // never fills) still gives back what loading its modules grew.
    watchBusy();
  }
  return {
    get compactions() {
      return compactions;
    },
    stop() {
      stopped = true;
      observer.disconnect();
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
      profiler?.stop();
      profiler = undefined;
    },
  };
}
