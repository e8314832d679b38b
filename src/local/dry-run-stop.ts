/**
 * @module local/dry-run-stop
 * The first SIGTERM or SIGINT of a dry run drains the worker (the job gets
 * shutdownTimeoutMs, then its abort and timeoutGraceMs). Once the runtime has stopped,
 * nothing more can happen to the job, so the dry run stops waiting for it: a job that
 * still has no final state then (its result was lost on the way) gets a FAILED record
 * that says so, instead of a dry run that waits forever for a second signal.
 */
import { ServerlessWorkerError, isTerminal, type JobView } from '../job/index.js';
import { toErrorPayload, type ErrorOrigin } from '../worker/index.js';

/** After the runtime stopped, how long the job's end may still take to reach the store, ms. */
export const STOPPED_SETTLE_MS = 1_000;

/** `view` when it is final; otherwise the FAILED view the dry run prints after a signal stopped it. */
export function viewAfterStop(view: JobView, signal: NodeJS.Signals, origin: ErrorOrigin): JobView {
  if (isTerminal(view.status)) return view;
  const error = new ServerlessWorkerError(
    'SW_WORKER_SHUTDOWN',
    `The dry run was stopped by ${signal}: the worker drained and stopped, but job ${view.id} never reached a final state (it was ${view.status}); its result was lost on the way`,
    { jobId: view.id, status: view.status },
  );
  return { ...view, status: 'FAILED', error: JSON.stringify(toErrorPayload(error, origin)) };
}
