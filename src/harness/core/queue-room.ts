/**
 * @module harness/core/queue-room
 * The cap on what queued requests hold (maxQueuedBytes, `--max-queued-bytes`): a request
 * that would take the store's queued bytes past it is refused with SW_QUEUE_FULL and a
 * time to come back, before the store takes it. A store that does not count its queued
 * bytes (PostgreSQL: the queue lives in the database) has no cap.
 */
import { ServerlessWorkerError } from '../../job/errors.js';
import type { JobStore } from '../store/job-store.js';

/** Retry-After of a SW_QUEUE_FULL answer, s: workers free room as they take jobs. */
export const QUEUE_FULL_RETRY_AFTER_S = 5;

/**
 * Throws SW_QUEUE_FULL when `bytes` more would pass `max`; nothing when there is no cap, no size or no count.
 * `inFlightBytes`: bodies still arriving that were let in on their Content-Length (counted as if queued).
 */
export function checkQueueRoom(store: Pick<JobStore, 'queuedBytes'>, max: number | undefined, bytes: number, inFlightBytes = 0): void {
  if (max === undefined || bytes === 0 || store.queuedBytes === undefined) return;
  const queued = store.queuedBytes();
  if (queued + inFlightBytes + bytes <= max) return;
  const arriving = inFlightBytes > 0 ? ` and requests still arriving ${inFlightBytes}` : '';
  throw new ServerlessWorkerError(
    'SW_QUEUE_FULL',
    `The harness's queue is full: queued requests hold ${queued} bytes${arriving} and this one has ${bytes}, past the limit of ${max} (maxQueuedBytes, --max-queued-bytes); retry after ${QUEUE_FULL_RETRY_AFTER_S} s`,
    {
      queuedBytes: queued,
      ...(inFlightBytes > 0 ? { inFlightBytes } : {}),
      requestBytes: bytes,
      maxQueuedBytes: max,
      retryAfterSeconds: QUEUE_FULL_RETRY_AFTER_S,
    },
  );
}
