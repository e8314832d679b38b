/**
 * @module transports/platform/urls
 * The worker URLs, built from the platform's templates exactly as the reference worker
 * builds them: `$ID` in the take URL is the worker id; in the done and stream URLs
 * `$RUNPOD_POD_ID` is the worker id and `$ID` the job id; batch take and job stop
 * replace `/job-take/` in the take URL. Parameters go after `&`, or after `?` when the
 * URL has no query yet (the platform's URLs already end in `?`).
 */
import { urlForLog } from '../../log/url-for-log.js';
import type { PlatformEnv } from './platform-env.js';

/** A query value; `undefined` leaves the parameter out. */
export type QueryValue = string | number | boolean | undefined;

/** `url` with `params` appended after `?` or `&`, values percent-encoded, in the given order. */
export function appendParams(url: string, params: Readonly<Record<string, QueryValue>>): string {
  const pairs = Object.entries(params)
    .filter((entry): entry is [string, string | number | boolean] => entry[1] !== undefined)
    .map(([key, value]) => `${encodeURIComponent(key)}=${encodeURIComponent(String(value))}`);
  if (pairs.length === 0) return url;
  const query = pairs.join('&');
  if (!url.includes('?')) return `${url}?${query}`;
  return url.endsWith('?') || url.endsWith('&') ? `${url}${query}` : `${url}&${query}`;
}

/** `url` with a query already encoded (`a=1&b=2`) appended after `?` or `&`, as appendParams places it. */
function withQuery(url: string, query: string): string {
  if (!url.includes('?')) return `${url}?${query}`;
  return url.endsWith('?') || url.endsWith('&') ? `${url}${query}` : `${url}&${query}`;
}

/** `&attempt=N`, or nothing without an attempt (the hot path builds its queries by hand: its values need no encoding). */
function attemptParam(attempt: number | undefined): string {
  return attempt === undefined ? '' : `&attempt=${attempt}`;
}

const TAKE_SEGMENT = '/job-take/';

/** Every URL the platform transport calls, for one worker. */
export interface PlatformUrls {
  /** `GET`: one job. */
  take(inProgress: boolean): string;
  /** `GET`: up to `batchSize` jobs; undefined when the take URL has no `/job-take/` to replace. */
  takeBatch(batchSize: number, inProgress: boolean): string | undefined;
  /** `POST`: a job's result or progress; `&attempt=N` when the job carried an attempt (the platform ignores it). */
  done(jobId: string, isStream: boolean, attempt?: number): string;
  /** `POST`: one stream chunk; undefined without RUNPOD_WEBHOOK_POST_STREAM. */
  stream(jobId: string, attempt?: number): string | undefined;
  /** `GET` long poll: jobs to stop; undefined when the take URL has no `/job-take/`. */
  readonly stop: string | undefined;
  /** `GET`: the heartbeat, without parameters; undefined without RUNPOD_WEBHOOK_PING. */
  readonly ping: string | undefined;
}

/** Job ids come from the platform; encoding keeps an odd one from changing the path. */
function jobSegment(jobId: string): string {
  return encodeURIComponent(jobId);
}

function perJob(template: string, workerId: string): (jobId: string) => string {
  const parts = template.replaceAll('$RUNPOD_POD_ID', workerId).split('$ID');
  if (parts.length === 2) {
    const [before, after] = parts as [string, string];
    return (jobId) => before + jobSegment(jobId) + after;
  }
  return (jobId) => parts.join(jobSegment(jobId));
}

/** The URLs of `workerId` from the platform variables. */
export function buildPlatformUrls(env: PlatformEnv, workerId: string): PlatformUrls {
  const take = env.getJobUrl.replaceAll('$ID', workerId);
  const hasTakeSegment = take.includes(TAKE_SEGMENT);
  const batch = hasTakeSegment ? take.replace(TAKE_SEGMENT, '/job-take-batch/') : undefined;
  const done = perJob(env.postOutputUrl, workerId);
  const stream = env.postStreamUrl === undefined ? undefined : perJob(env.postStreamUrl, workerId);
  const jobInProgress = (inProgress: boolean): string => (inProgress ? '1' : '0');
  return {
    take: (inProgress) => withQuery(take, `job_in_progress=${jobInProgress(inProgress)}`),
    takeBatch: (batchSize, inProgress) =>
      batch === undefined ? undefined : withQuery(batch, `batch_size=${Math.floor(batchSize)}&job_in_progress=${jobInProgress(inProgress)}`),
    done: (jobId, isStream, attempt) => withQuery(done(jobId), `isStream=${isStream}${attemptParam(attempt)}`),
    stream: (jobId, attempt) => (stream === undefined ? undefined : withQuery(stream(jobId), `isStream=false${attemptParam(attempt)}`)),
    stop: hasTakeSegment ? take.replace(TAKE_SEGMENT, '/job-stop/') : undefined,
    ping: env.pingUrl?.replaceAll('$RUNPOD_POD_ID', workerId),
  };
}

/** A URL for logs: no credentials, query or fragment (the one helper of log/url-for-log.ts). */
export { urlForLog };
