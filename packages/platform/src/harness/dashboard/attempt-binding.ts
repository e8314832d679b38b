/**
 * @module harness/dashboard/attempt-binding
 * Feeds the dashboard's AttemptLog from the harness: every endpoint's job ends, and
 * the worker API's takes, requeues (worker declared gone, take answer lost) and
 * refused stale posts, chained before the hooks the server was given.
 */
import type { Harness } from 'serverless-worker/internal';
import type { WorkerApiEvents } from '../worker-api/options.js';
import type { AttemptLog } from './attempt-log.js';

/** Record every job end of `harness` from now on; answers the unsubscribe. */
export function bindAttemptLog(harness: Harness, log: AttemptLog): () => void {
  const disposers: Array<() => void> = [];
  const stopWatching = harness.onEndpoint((endpoint) => {
    disposers.push(endpoint.jobEnded.add((job) => log.ended(job)));
  });
  return () => {
    stopWatching();
    for (const dispose of disposers.splice(0)) dispose();
  };
}

/** `events` with the log's hooks run first (the given hooks still run, and see the same info). */
export function withAttemptEvents(events: WorkerApiEvents | undefined, log: AttemptLog): WorkerApiEvents {
  return {
    ...events,
    onJobsTaken: (info) => {
      log.taken(info.endpointId, info.workerId, info.jobs);
      events?.onJobsTaken?.(info);
    },
    onStaleAttempt: (info) => {
      log.stalePost(info.endpointId, info.workerId, info.jobId, info.attempt, info.what);
      events?.onStaleAttempt?.(info);
    },
    onWorkerGone: (info) => {
      log.requeued(
        info.endpointId,
        info.workerId,
        info.requeued,
        `requeued: its worker was declared gone (${info.reason === 'silent' ? 'no heartbeat' : 'it reported itself unhealthy'})`,
      );
      events?.onWorkerGone?.(info);
    },
    onJobsLost: (info) => {
      log.requeued(info.endpointId, info.workerId, info.requeued, 'requeued: the worker never listed it in its heartbeat (the job-take answer was lost)');
      events?.onJobsLost?.(info);
    },
  };
}
