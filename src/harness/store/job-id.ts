/**
 * @module harness/store/job-id
 * New job ids, for every store: a UUID, with `sync-` in front for /runsync (as on the
 * platform).
 */
import { randomUUID } from 'node:crypto';

/**
 * A new job id, flattened at once. Node builds `randomUUID()`'s text by concatenation,
 * so the id is a tree of about 15 cons strings, about 520 bytes of heap instead of 75,
 * for as long as the job is kept, unless something flattens it first (an HTTP answer
 * that serializes it does). Jobs submitted in process kept 1 329 bytes of heap each
 * when finished, 905 with this (the `memory` bench, bench/README.md). Reading a
 * character makes V8 flatten it; the garbage collector then drops the tree.
 */
export function newJobId(sync: boolean): string {
  const id = sync ? `sync-${randomUUID()}` : randomUUID();
  void id.charCodeAt(0);
  return id;
}
