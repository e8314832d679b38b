/**
 * @module local/idle-compaction
 * Memory given back once a busy process goes quiet: both processes of `--serve-api`
 * (the local API and its supervised worker child) and every platform worker (serve.ts;
 * `idleCompactionMs` sets the full step's wait, `false` turns it off) run this. V8
 * keeps the heap it grew while busy (its young generation at its 16 MiB x 2 cap, old-space pages holding
 * little), and its own memory reducer did not run in the worker child in 45 s of idle
 * after 20 000 `/runsync` (bench/README, issue 34 item 3: 106 MiB, 74 MiB after one full
 * collection). So, in two steps:
 *
 * - once no young-generation collection has run for `quietMs` (nothing is being allocated: no jobs;
 *   the full ones V8's memory reducer runs on a timer after a spell do not count),
 *   one young-generation collection: V8 then shrinks its young generation to its smallest,
 *   since its allocation rate over the last 5 s is low (hence `quietMs` over 5 s). This is
 *   most of what the local API's process gives back (32 MiB of young generation to 1). There
 *   it waits `youngAfterMs` longer (serve-api.ts): a burst of requests that came back to the
 *   smallest young generation ran on 4-6x the young collections of one at once (bench/README,
 *   issue 46, burst after idle);
 * - `fullAfterMs` after the work was found over (the first step's time, unless delayed), and the heap grew by `minGrowthBytes` since the
 *   last time, a full collection that gives memory back (collectForMemory): old-space garbage, the pages it
 *   was on, and those V8 pools. Not at once: a burst of jobs
 *   soon after a full collection ran at 0.6-0.7x the rate of one after a young collection
 *   alone (bench/README, issue 34, burst after idle; V8's trace showed more mark-compacts in
 *   that burst, after a heap just compacted small). A burst after a longer pause pays that.
 *   30 s, not the minute it was: after a minute the worker child of `--serve-api` had not given
 *   back what 20 000 `/runsync` grew 70 s after them (its work is found over 10-15 s after the last
 *   job), 15 MiB PSS (bench/README, issue 46, 2026-12-05).
 *   Work during the wait calls it off; the next quiet period arms it anew, so traffic that comes
 *   back within 30 s never meets one. A memory-reducing collection keeps none of the maps that
 *   only optimized code points at, so one in a pause between bursts threw the request path's
 *   code away, and with the wait kept through work, the runpod-python bench's bursts 23 s apart
 *   met one in nearly every pause (bursts after idle at 0.46-0.57 of a warm one; bench/README,
 *   issue 46, 2026-12-05). The local API's finished `/runsync` jobs, which expire a minute after
 *   their burst, are the harness's to collect (harness/idle-collect.ts).
 *
 * Start-up counts as work. Once V8's own memory reducer has given back what start-up grew (or
 * this compaction's first full step ran), that reducer, which runs a few seconds after every
 * spell, need not reduce memory any more, and where V8 lets it (Node 24) it is told not to: its
 * memory-reducing collections threw the request path's optimized code away in every pause
 * (metrics/memory-reducer.ts). So a burst after a pause under 30 s runs on optimized code; one
 * after the full step does not.
 *
 * What it costs: a busy process, a native record per collection
 * (v8.GCProfiler) and a timer every `quietMs`; an idle one, no wake-up at all (a 'gc'
 * PerformanceObserver waits for the next collection, and a process that allocates nothing
 * collects nothing) but the full step's timer (and the young step's, where delayed); once per quiet period after work,
 * a young collection (a few ms) and, later, two full ones (about 5-40 ms each on these heaps;
 * memory-reducing ones from Node 22, which also give back the pages V8 pools: collectForMemory).
 * The collector is V8's `gc` from a fresh context (`--expose-gc` set for that moment only):
 * the handler's global scope never gets a `gc`.
 */
import { constants as perfConstants, PerformanceObserver, performance, type PerformanceEntry } from 'node:perf_hooks';
import { GCProfiler, getHeapStatistics } from 'node:v8';
import { collectForMemory, collector, type Collector } from '../metrics/garbage-collector.js';
import { keepOptimizedCodeOnceReduced, type ReducerSwitch } from '../metrics/memory-reducer.js';

export const IDLE_COMPACTION = {
  /** No collection for this long (over V8's 5 s allocation-rate window): the young generation is given back, ms. */
  quietMs: 5_500,
  /** Still none this long after that: old space is compacted, ms. */
  fullAfterMs: 30_000,
  /** The committed heap grew by this much since the last compaction, bytes. */
  minGrowthBytes: 4 * 1024 * 1024,
} as const;

export interface IdleCompactionOptions {
  /** No collection for this long: the work is over, ms (default IDLE_COMPACTION.quietMs). */
  readonly quietMs?: number;
  /** The full step this long after the work was found over, ms (default IDLE_COMPACTION.fullAfterMs). */
  readonly fullAfterMs?: number;
  /** The full step only when the committed heap grew by this much since the last, bytes. */
  readonly minGrowthBytes?: number;
  /**
   * The young step this long after the work was found over instead of at once, ms (default 0);
   * work meanwhile calls it off. Not after start-up, whose growth is given back at once. For a
   * process whose traffic comes in bursts a few seconds apart (the local API): a burst that
   * comes back to a young generation shrunk to its smallest runs on several times the young
   * collections until V8 grows it again.
   */
  readonly youngAfterMs?: number;
}

export interface IdleCompaction {
  /** Young-generation collections run so far (the first step). */
  readonly youngCollections: number;
  /** Full collections run so far (the second step). */
  readonly compactions: number;
  stop(): void;
}

/**
 * What counts as work: young-generation collections, which only allocation brings. V8's own memory
 * reducer runs full collections on a timer some seconds after an allocation spell, with no code
 * running: counted as work they armed another quiet check, and the young step with it.
 */
const YOUNG_GC_TYPES: ReadonlySet<string> = new Set(['Scavenge', 'MinorMarkCompact', 'MinorMarkSweep']);

function isYoungCollection(entry: PerformanceEntry): boolean {
  const kind = ((entry as { detail?: unknown }).detail as { kind?: number } | null | undefined)?.kind;
  return kind === undefined || kind === perfConstants.NODE_PERFORMANCE_GC_MINOR;
}

/** A timer that keeps no process alive. */
function later(run: () => void, ms: number): NodeJS.Timeout {
  const handle = setTimeout(run, ms);
  handle.unref();
  return handle;
}

/** The full step: one full collection if the heap grew by `minGrowthBytes` since the last (answers whether it ran). */
function fullCollection(collect: Collector | undefined, minGrowthBytes: number): { run(): boolean; stop(): void } {
  // 0 at first: the heap start-up grew is given back after its first quiet period.
  let baseline = 0;
  // V8's reducer keeps optimized code once start-up's memory is given back; none without our collector.
  const reducer: ReducerSwitch | undefined = collect !== undefined ? keepOptimizedCodeOnceReduced() : undefined;
  const run = (): boolean => {
    if (collect === undefined || getHeapStatistics().total_heap_size - baseline < minGrowthBytes) return false;
    // Not one plain collection: it frees the objects, but V8 keeps the pages it left sparse until
    // the next one moves their survivors (after 20 000 /runsync, one left the local API's old space
    // at 47.5 MiB for 19 MiB used; bench/README, issue 46 item 3), and the pages it pools.
    collectForMemory(collect);
    baseline = getHeapStatistics().total_heap_size;
    reducer?.now();
    return true;
  };
  return { run, stop: () => reducer?.stop() };
}

/**
 * The first step, the young generation (V8 shrinks it after a collection at a low allocation rate):
 * at once, or `afterMs` after the work was found over, called off by work meanwhile.
 */
function youngStep(collect: Collector | undefined, afterMs: number, collected: () => void): { due(): void; cancel(): void } {
  let timer: NodeJS.Timeout | undefined;
  // Start-up's quiet period is the first: what loading the modules grew is given back at once.
  let afterStartUp = true;
  const run = (): void => {
    timer = undefined;
    if (collect === undefined) return;
    collect({ type: 'minor' });
    collected();
  };
  const cancel = (): void => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
  };
  return {
    due: () => {
      cancel();
      if (afterMs > 0 && !afterStartUp) timer = later(run, afterMs);
      else run();
      afterStartUp = false;
    },
    cancel,
  };
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
export function compactWhenIdle(options: IdleCompactionOptions = {}): IdleCompaction {
  const { quietMs, fullAfterMs, minGrowthBytes, youngAfterMs } = { ...IDLE_COMPACTION, youngAfterMs: 0, ...options };
  const collect = collector();
  let youngCollections = 0;
  let compactions = 0;
  // Collections before this time are our own (their entries arrive after the call).
  let ownUntil = 0;
  // The quiet check's timer (busy) and the full step's (armed by the first step, called off by work).
  let timer: NodeJS.Timeout | undefined;
  let fullTimer: NodeJS.Timeout | undefined;
  let profiler: GCProfiler | undefined;
  let stopped = false;
  /** Busy: collections counted natively until the next check (the steps waiting are called off). */
  const watchBusy = (): void => {
    observer.disconnect();
    young.cancel();
    clearTimeout(fullTimer);
    fullTimer = undefined;
    profiler = new GCProfiler();
    profiler.start();
    if (timer !== undefined) clearTimeout(timer);
    timer = later(check, quietMs);
  };
  /** Quiet: the observer waits for the next collection (none while idle: no wake-up but the full step's). */
  const watchIdle = (): void => {
    profiler = undefined;
    observer.observe({ entryTypes: ['gc'] });
  };
  const young = youngStep(collect, youngAfterMs, () => {
    youngCollections++;
    ownUntil = performance.now();
  });
  const full = fullCollection(collect, minGrowthBytes);
  const collectFull = (): void => {
    if (!full.run()) return;
    compactions++;
    ownUntil = performance.now();
  };
  /** The second step's time (quiet all along: work would have called it off). */
  const compact = (): void => {
    fullTimer = undefined;
    if (!stopped) collectFull();
  };
  const check = (): void => {
    timer = undefined;
    const collections = profiler?.stop()?.statistics.filter((entry) => YOUNG_GC_TYPES.has(entry.gcType)).length ?? 0;
    if (stopped) return;
    if (collections > 0) {
      // Still working: look again after another quiet period.
      profiler?.start();
      timer = later(check, quietMs);
      return;
    }
    young.due();
    watchIdle();
    fullTimer = later(compact, fullAfterMs);
  };
  const observer = new PerformanceObserver((list) => {
    if (stopped || profiler !== undefined) return;
    if (list.getEntries().some((entry) => entry.startTime >= ownUntil && isYoungCollection(entry))) watchBusy();
  });
  if (collect !== undefined) {
    // Start-up counts as work: a process that collects nothing after it (its young generation
    // never fills) still gives back what loading its modules grew.
    watchBusy();
  }
  return {
    get youngCollections() {
      return youngCollections;
    },
    get compactions() {
      return compactions;
    },
    stop() {
      stopped = true;
      observer.disconnect();
      clearTimeout(timer);
      clearTimeout(fullTimer);
      young.cancel();
      full.stop();
      profiler?.stop();
      profiler = undefined;
    },
  };
}
