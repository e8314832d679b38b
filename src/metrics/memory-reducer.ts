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
 * those maps. V8 reads the flag each time the reducer starts, so it is set at run time, once the
 * reducer has given back what start-up grew: REDUCER_SWITCH_MS after the idle compaction starts
 * (the reducer's start-up pair comes about 8 s after start-up's last full collection, and its second
 * gave back 8 MiB of the worker child's), or at the idle compaction's first full step if that
 * comes first. A timer, not a watch of the 'gc' entries: an observer would run for every
 * collection of a process busy from its start. A process still busy then gives start-up's garbage
 * back at its first full step instead. V8 12 (Node 22) and 14 (Node 26) have no such
 * flag (14 has a reducer delay that can be set at run time; not measured here), so there nothing
 * changes. A process whose command line or NODE_OPTIONS names a memory-reducer flag keeps it.
 */
import { setFlagsFromString } from 'node:v8';

/** The flag, on the V8 line that has it. */
const REGULAR_REDUCER_COLLECTIONS: Readonly<Record<number, string>> = { 13: '--no-memory-reducer-favors-memory' };

/** How long after the idle compaction starts the flag is set (unless its first full step comes sooner), ms. */
export const REDUCER_SWITCH_MS = 20_000;

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
  /** Call the timer off (the flag stays as it is). */
  stop(): void;
}

/** Sets `flag` REDUCER_SWITCH_MS from now, or when now() is called; nothing where `flag` is undefined. */
export function keepOptimizedCodeOnceReduced(flag: string | undefined = codeKeepingReducerFlag(), afterMs: number = REDUCER_SWITCH_MS): ReducerSwitch {
  let switched = false;
  const set = (): void => {
    clearTimeout(timer);
    if (switched || flag === undefined) return;
    switched = true;
    setFlagsFromString(flag);
  };
  const timer = flag === undefined ? undefined : setTimeout(set, afterMs);
  timer?.unref();
  return {
    get switched() {
      return switched;
    },
    now: set,
    stop: () => clearTimeout(timer),
  };
}
