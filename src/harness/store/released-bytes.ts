/**
 * @module harness/store/released-bytes
 * The memory store tells when it lets go of request bodies (a compaction of an endpoint's
 * newest-first list after deletions, memory-endpoint.ts), so that a harness can ask for a
 * garbage collection once a lot was freed: an idle process runs none, and its RSS stayed
 * hundreds of MB above its start after a purge (issue 49 item 4). Process-wide, as a
 * collection is: every store of the process reports here.
 */

type Listener = (bytes: number) => void;

const listeners = new Set<Listener>();

/** Call `listener` with the request bytes each release let go of; answers the unsubscribe. */
export function onRequestBytesReleased(listener: Listener): () => void {
  listeners.add(listener);
  return () => {
    listeners.delete(listener);
  };
}

/** A store let go of `bytes` of requests (they are garbage from now on). */
export function noteRequestBytesReleased(bytes: number): void {
  if (bytes <= 0) return;
  for (const listener of listeners) listener(bytes);
}
