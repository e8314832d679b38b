/**
 * @module metrics/garbage-collector
 * V8's own `gc`, for the processes that give memory back when they go quiet (the SDK's
 * idle compaction under `--serve-api`, the harness's collection after a purge of large
 * bodies). Node offers it only with --expose-gc on the command line; the flag is set for
 * the moment of taking it from a fresh context, so no script's global scope gets a `gc`.
 */
import { channel } from 'node:diagnostics_channel';
import { performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** What V8's `gc` is asked for: a young-generation collection (`minor`) or a full one (`major`), the latter `last-resort` to give memory back. */
export interface CollectionOptions {
  readonly type: 'minor' | 'major';
  readonly flavor?: 'regular' | 'last-resort';
}

/** V8's `gc`: a full collection, or with `{ type: 'minor' }` a young-generation one. */
export type Collector = (options?: CollectionOptions) => void;

/** The first V8 version whose `gc` takes `flavor` (Node 22's). */
export const LAST_RESORT_FROM_V8 = 12;

/**
 * The diagnostics channel on which every collectForMemory call is published, once it returns:
 * a MemoryCollection. For tools and tests that need to tell this process's own collections
 * from V8's: Node's 'gc' performance entries mark a `gc()` call as forced on Node 20 and a
 * last-resort one as such on Node 26, but on Node 22 and 24 a last-resort collection carries
 * no flag at all.
 */
export const MEMORY_COLLECTION_CHANNEL = 'serverless-worker:memory-collection';

/** What MEMORY_COLLECTION_CHANNEL publishes. */
export interface MemoryCollection {
  /** `performance.now()` just before the first collection (a 'gc' entry starting at or after it is one of them). */
  readonly startedAt: number;
  /** How: one last-resort full collection (V8 12 and later), or two regular ones. */
  readonly flavor: 'last-resort' | 'regular';
  /** V8's used heap before and after, bytes. */
  readonly usedBefore: number;
  readonly usedAfter: number;
}

const memoryCollections = channel(MEMORY_COLLECTION_CHANNEL);

/**
 * A full collection that gives memory back as V8's own memory reducer does: V8 12 and later
 * (Node 22 on) take `flavor: 'last-resort'`, full collections that compact every page and
 * release the pages V8 keeps pooled, until one frees nothing more (two on these heaps). On the
 * local API, 70 s after 20 000 `/runsync` on Node 24, both processes held 101 MiB PSS against
 * 116 with two regular ones (bench/README, issue 46: the idle compaction's full step gives
 * pooled pages back). V8 11 (Node 20) reads any options object as a young collection, so there
 * it is two plain calls (the second moves what the first left on sparse pages).
 */
export function collectForMemory(collect: Collector, version: string = process.versions.v8): void {
  const told = memoryCollections.hasSubscribers;
  const startedAt = told ? performance.now() : 0;
  const usedBefore = told ? process.memoryUsage().heapUsed : 0;
  const flavor = Number.parseInt(version, 10) >= LAST_RESORT_FROM_V8 ? 'last-resort' : 'regular';
  if (flavor === 'last-resort') collect({ type: 'major', flavor: 'last-resort' });
  else {
    collect();
    collect();
  }
  if (told) memoryCollections.publish({ startedAt, flavor, usedBefore, usedAfter: process.memoryUsage().heapUsed } satisfies MemoryCollection);
}

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
