/**
 * @module harness/launcher/start-failures
 * Jobs of an endpoint no worker can start for: they fail, with the reason, instead of
 * waiting IN_QUEUE until their ttl (24 h by default) with the reason only in /health.
 * Once no worker could start for `startFailureTimeoutMs` (the backend's start problem, or
 * start-up crashes in a row), and no worker of the endpoint is ready anywhere (one joined
 * by hand, or another harness's on the database, may still take them), the launcher
 * takes the queued jobs as a worker of its own and posts each a failure
 * SW_WORKER_START_FAILED: the moves every job makes (IN_QUEUE -> IN_PROGRESS -> FAILED),
 * so both stores, webhooks and /retry treat it as any failed job.
 */
import type { Logger } from 'pino';
import type { EndpointJobs, JobErrorPayload, StoredWorker } from 'serverless-worker/internal';
import type { Template } from '../management/index.js';
import type { EndpointRuntime } from './endpoint-runtime.js';
import type { LaunchBackend } from './launch-backend.js';
import type { LauncherReports } from './launcher-reports.js';

/** The worker id the failed jobs show: no worker of the endpoint took them. */
export const START_FAILED_WORKER_ID = 'launcher-start-failed';

/** Jobs failed in one round at most: a long queue fails over a few ticks, each round short. */
const FAIL_PER_ROUND = 100;

/** Why no worker can start for the endpoint now, or undefined when one can. */
export function cannotStartReason(runtime: Pick<EndpointRuntime, 'startProblem' | 'unhealthyReason'>): string | undefined {
  return runtime.startProblem ?? runtime.unhealthyReason;
}

/** Keep `cannotStartSince` in step with the endpoint's state at `now`; answers the reason, if it cannot start. */
export function noteStartState(runtime: EndpointRuntime, now: number): string | undefined {
  const reason = cannotStartReason(runtime);
  if (reason === undefined) runtime.cannotStartSince = undefined;
  else runtime.cannotStartSince ??= now;
  return reason;
}

/** Whether the queued jobs must fail now: no start for `timeoutMs` and no ready worker of the endpoint anywhere. */
export function jobsMustFail(runtime: EndpointRuntime, now: number, timeoutMs: number, presence: Iterable<StoredWorker>): boolean {
  if (runtime.cannotStartSince === undefined || now - runtime.cannotStartSince < timeoutMs) return false;
  for (const worker of presence) if (worker.id !== START_FAILED_WORKER_ID && !worker.initializing) return false;
  return true;
}

/** The error a job gets. */
export function startFailedError(endpointId: string, reason: string, sinceMs: number): JobErrorPayload {
  return {
    error_type: 'WorkerStartFailed',
    error_code: 'SW_WORKER_START_FAILED',
    error_message: `No worker of endpoint ${endpointId} could start for ${sinceMs} ms (startFailureTimeoutMs): ${reason}. Fix it, then /retry the job`,
    hostname: 'harness',
    worker_id: START_FAILED_WORKER_ID,
    runtime_version: '',
  };
}

/** Take up to FAIL_PER_ROUND queued jobs and fail each with `error`; answers their ids. */
export async function failQueuedJobs(jobs: EndpointJobs, error: JobErrorPayload): Promise<string[]> {
  const taken = await jobs.tryTake(START_FAILED_WORKER_ID, FAIL_PER_ROUND);
  const failed: string[] = [];
  for (const job of taken) {
    const ack = await jobs.complete(job.id, START_FAILED_WORKER_ID, { kind: 'error', error }, job.attempt);
    if (ack.applied) failed.push(job.id);
  }
  // Not a worker: out of the endpoint's presence (/health, the Workers page) again.
  await jobs.workers.remove(START_FAILED_WORKER_ID);
  return failed;
}

/** Fail the endpoint's queued jobs SW_WORKER_START_FAILED, told in the log and the scale events. */
export async function failQueuedAndTell(
  told: { readonly log: Logger; readonly reports: LauncherReports },
  runtime: EndpointRuntime,
  jobs: EndpointJobs,
  reason: string,
  now: number,
): Promise<void> {
  const sinceMs = now - (runtime.cannotStartSince ?? now);
  const failed = await failQueuedJobs(jobs, startFailedError(jobs.id, reason, sinceMs));
  if (failed.length === 0) return;
  const message = `${failed.length} queued job(s) failed SW_WORKER_START_FAILED: no worker could start for ${sinceMs} ms (${reason})`;
  told.log.error({ endpointId: jobs.id, jobs: failed, reason, sinceMs }, `endpoint ${jobs.id}: ${message}`);
  // An unhealthy endpoint's consequence, in its kind of event (the dashboard draws these kinds).
  told.reports.event(runtime, { endpointId: jobs.id, kind: 'unhealthy', message });
}

/** Whether the backend can start no worker of the template now (an image missing); the endpoint's start problem follows. */
export async function cannotStartNow(
  reports: LauncherReports,
  runtime: EndpointRuntime,
  endpointId: string,
  template: Template,
  backend: LaunchBackend,
): Promise<boolean> {
  const problem = await backend.startProblem(template).catch((error: unknown) => (error as Error).message);
  reports.startProblem(runtime, endpointId, template.imageName, problem);
  return problem !== undefined;
}
