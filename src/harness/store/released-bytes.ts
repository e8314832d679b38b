/**
 * @module harness/store/released-bytes
 * The memory store tells when it lets go of jobs and their request bodies (a compaction of
 * an endpoint's newest-first list after deletions, memory-endpoint.ts), so that a harness
 * can ask for a garbage collection once a lot was freed: an idle process runs none, and its
 * RSS stayed hundreds of MB above its start after a purge (issue 49 item 4), and 20 000
 * expired `/runsync` results (about 30 MB of heap) stayed past the 70 s after their burst
 * that issue 46 item 3 measures. Process-wide, as a collection is: every store of the
 * process reports here.
 */

/** `bytes` of requests and `jobs` jobs let go of by one release (both garbage from then on). */
type Listener = (bytes: number, jobs: number) => void;

const listeners = new Set<Listener>();
/** Jobs deleted so far, released or not yet (a deleted job stays in its list until the next compaction). */
let deleted = 0;

/** Call `listener` with the request bytes and the jobs each release let go of; answers the unsubscribe. */
export function onRequestBytesReleased(listener: Listener): () => void {
  listeners.add(listener);
  return () => {
    listeners.delete(listener);
  };
}

/** A store let go of `bytes` of requests and of `jobs` jobs (they are garbage from now on). */
export function noteRequestBytesReleased(bytes: number, jobs = 0): void {
  if (bytes <= 0 && jobs <= 0) return;
  for (const listener of listeners) listener(bytes, jobs);
}

/** A store deleted a job (a count, not a call out: a sweep deletes thousands). */
export function noteJobDeleted(): void {
  deleted++;
}

/** Jobs the stores of this process deleted so far: still growing while an expiry sweep or a purge goes on. */
export function jobsDeletedSoFar(): number {
  return deleted;
}
