/**
 * @module metrics/memory-reducer
 * V8's memory reducer collects a few seconds after a spell of allocation ends, as a
 * memory-reducing full collection. Such a collection keeps none of the maps that only
 * optimized code still points at (V8 keeps those "retained maps" through two regular full
 * collections), so every function optimized for a request's objects was thrown away once a
 * server had been idle for about 8 s, and the next burst ran unoptimized while V8 compiled them
 * again: `--trace-deopt` marked about 130 functions "embedded weak objects cleared" in the two
 * processes of `--serve-api` after each such collection, and a burst after 11 s idle ran at
 * 0.45-0.6x of a warm one (bench/README, issue 46, 2026-12-05).
 *
 * The idle compaction (local/idle-compaction.ts) gives memory back itself 30 s after each spell
 * of work, so once start-up's memory is given back, V8's reducer need not reduce: on V8 13
 * (Node 24) `--no-memory-reducer-favors-memory` makes its collections regular ones, which keep
 * those maps. V8 reads the flag each time the reducer starts, so it is set at run time: a few
 * seconds after the reducer's first collection (its start-up pair, whose second gave back 8 MiB
 * of the worker child's), or at the idle compaction's first full step if that comes first. Node's
 * 'gc' entries mark the reducer's collections (and memory-pressure ones) with
 * NODE_PERFORMANCE_GC_FLAGS_ALL_EXTERNAL_MEMORY. V8 12 (Node 22) and 14 (Node 26) have no such
 * flag (14 has a reducer delay that can be set at run time; not measured here), so there nothing
 * changes. A process whose command line or NODE_OPTIONS names a memory-reducer flag keeps it.
 */
import { constants as perfConstants, PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';

/** The flag, on the V8 line that has it. */
const REGULAR_REDUCER_COLLECTIONS: Readonly<Record<number, string>> = { 13: '--no-memory-reducer-favors-memory' };

/** After the reducer's first collection, how long its second may take to come, ms. */
export const REDUCER_PAIR_MS = 3_000;

/** The flag that makes V8's memory reducer keep optimized code, for V8 `version`; undefined where there is none, or the user set one. */
export function codeKeepingReducerFlag(
  version: string = process.versions.v8,
  given: readonly string[] = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)],
): string | undefined {
  if (given.some((flag) => /^--(no-)?memory[-_]reducer/.test(flag))) return undefined;
  return REGULAR_REDUCER_COLLECTIONS[Number.parseInt(version, 10)];
}

export interface ReducerSwitch {
  /** Whether the flag is set by now. */
  readonly switched: boolean;
  /** Set it now (this process just gave its memory back itself). */
  now(): void;
  /** Stop watching (the flag stays as it is). */
  stop(): void;
}

function isReducerCollection(entry: PerformanceEntry): boolean {
  const { kind, flags = 0 } = ((entry as { detail?: unknown }).detail ?? {}) as { kind?: number; flags?: number };
  return kind === perfConstants.NODE_PERFORMANCE_GC_MAJOR && (flags & perfConstants.NODE_PERFORMANCE_GC_FLAGS_ALL_EXTERNAL_MEMORY) !== 0;
}

/** Sets `flag` once V8's reducer has run its first collections (or now() is called); nothing where `flag` is undefined. */
export function keepOptimizedCodeOnceReduced(flag: string | undefined = codeKeepingReducerFlag()): ReducerSwitch {
  let switched = false;
  let timer: NodeJS.Timeout | undefined;
  const observer =
    flag === undefined
      ? undefined
      : new PerformanceObserver((list) => {
          if (timer !== undefined || !list.getEntries().some(isReducerCollection)) return;
          observer?.disconnect();
          timer = setTimeout(set, REDUCER_PAIR_MS);
          timer.unref();
        });
  function set(): void {
    observer?.disconnect();
    clearTimeout(timer);
    if (switched || flag === undefined) return;
    switched = true;
    setFlagsFromString(flag);
  }
  observer?.observe({ entryTypes: ['gc'] });
  return {
    get switched() {
      return switched;
    },
    now: set,
    stop: () => {
      observer?.disconnect();
      clearTimeout(timer);
    },
  };
}
