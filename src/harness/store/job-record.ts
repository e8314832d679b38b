/**
 * @module harness/store/job-record
 * What the harness shows of a stored job: the view `/status` answers and the delivery
 * a worker receives.
 */
import type { Job, JobErrorPayload, JobView } from '../../job/index.js';
import type { StoredJob } from './job-store.js';

/** Error text in the platform's form: the error payload as JSON text. */
export function errorText(error: JobErrorPayload): string {
  return JSON.stringify(error);
}

/** The job as `/status` shows it. */
export function toJobView(job: StoredJob): JobView {
  const view: JobView = { id: job.id, status: job.status };
  if (job.startedAt !== undefined) view.delayTime = Math.max(0, job.startedAt - job.queuedAt);
  if (job.endedAt !== undefined && job.startedAt !== undefined) view.executionTime = Math.max(0, job.endedAt - job.startedAt);
  if (job.output !== undefined) view.output = job.output;
  if (job.error !== undefined) view.error = errorText(job.error);
  if (job.retries > 0) view.retries = job.retries;
  return view;
}

/** What the worker receives: the request's fields, unchanged, with the job id and the attempt (the worker sends it back). */
export function toDelivery(job: Pick<StoredJob, 'id' | 'request' | 'attempt'>): Job {
  const { input, webhook, webhookV2, policy, s3Config } = job.request;
  return {
    id: job.id,
    // May be a RawJson (kept as its text while queued, job/raw-json.ts): the worker API
    // sends the text as it is, the in-process transport parses it.
    input,
    attempt: job.attempt,
    ...(policy !== undefined ? { policy } : {}),
    ...(webhook !== undefined ? { webhook } : {}),
    ...(webhookV2 !== undefined ? { webhookV2 } : {}),
    ...(s3Config !== undefined ? { s3Config } : {}),
  };
}
