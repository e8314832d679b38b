/**
 * @module harness/core/endpoint-types
 * The shapes EndpointJobs takes and answers: the store contract's (submit options,
 * result acks, stream reads, health counts) and the facade's options.
 */
import type { Clock } from '../../clock/index.js';
import type { JobStore } from '../store/job-store.js';

export type { HealthCounts, ResultAck, StreamRead, SubmitOptions } from '../store/job-store.js';
export { syncRetentionMs } from '../store/retention.js';

export interface EndpointJobsOptions {
  clock: Clock;
  /** Where the endpoint's jobs live. */
  store: JobStore;
  /** Called with errors thrown by listeners (they never stop the queue). */
  onListenerError?: (error: unknown) => void;
  /** Times a lost job (worker gone, take answer lost) goes back to the queue before it ends FAILED with SW_REQUEUE_LIMIT; default 3. */
  maxRequeues?: number;
  /** Cap on the bytes of queued requests the store holds in memory (JobStore.queuedBytes), every endpoint together; default none. */
  maxQueuedBytes?: number;
}
