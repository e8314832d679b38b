/**
 * @module metrics/garbage-collector
 * V8's own `gc`, for the processes that give memory back when they go quiet (the SDK's
 * idle compaction under `--serve-api`, the harness's collection after a purge of large
 * bodies). Node offers it only with --expose-gc on the command line; the flag is set for
 * the moment of taking it from a fresh context, so no script's global scope gets a `gc`.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** V8's `gc`: a full collection, or with `{ type: 'minor' }` a young-generation one. */
export type Collector = (options?: { readonly type: 'minor' | 'major' }) => void;

/** V8's `gc`, without a `gc` in this context's global scope; undefined if V8 refuses. */
export function collector(): Collector | undefined {
  const exposed = typeof (globalThis as { gc?: unknown }).gc === 'function';
  try {
    setFlagsFromString('--expose-gc');
    const gc: unknown = runInNewContext('gc');
    return typeof gc === 'function' ? (gc as Collector) : undefined;
  } catch {
    return undefined;
  } finally {
    // As it was: a process started with --expose-gc keeps it.
    if (!exposed) setFlagsFromString('--no-expose-gc');
  }
}
