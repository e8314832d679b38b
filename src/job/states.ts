/**
 * @module job/states
 * The six job states and every allowed move between them (spec section 3.1), in one
 * table. Every change of a job's state goes through `nextState`, which refuses a move
 * the table does not list with SW_ILLEGAL_TRANSITION.
 */
import { ServerlessWorkerError } from './errors.js';

export const JOB_STATUSES = ['IN_QUEUE', 'IN_PROGRESS', 'COMPLETED', 'FAILED', 'CANCELLED', 'TIMED_OUT'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

/** States a job never leaves by itself (only `retry` leaves FAILED and TIMED_OUT). */
export const TERMINAL_STATUSES: ReadonlySet<JobStatus> = new Set(['COMPLETED', 'FAILED', 'CANCELLED', 'TIMED_OUT']);

export function isTerminal(status: JobStatus): boolean {
  return TERMINAL_STATUSES.has(status);
}

/** What makes a job change state. */
export type JobTrigger =
  | 'take' // a worker takes the job
  | 'complete' // the worker posts an output
  | 'fail' // the worker posts an error
  | 'timeout' // the execution timeout elapses
  | 'cancel' // POST /cancel
  | 'retry' // POST /retry
  | 'requeue'; // the worker holding it is gone: the platform retries it

export interface Transition {
  readonly from: JobStatus;
  readonly trigger: JobTrigger;
  readonly to: JobStatus;
}

/**
 * Every allowed transition. ttl expiry, retention and purge are not transitions: they
 * delete the job (its status is then "not found").
 */
export const TRANSITIONS: readonly Transition[] = [
  { from: 'IN_QUEUE', trigger: 'take', to: 'IN_PROGRESS' },
  { from: 'IN_QUEUE', trigger: 'cancel', to: 'CANCELLED' },
  { from: 'IN_PROGRESS', trigger: 'complete', to: 'COMPLETED' },
  { from: 'IN_PROGRESS', trigger: 'fail', to: 'FAILED' },
  { from: 'IN_PROGRESS', trigger: 'timeout', to: 'TIMED_OUT' },
  { from: 'IN_PROGRESS', trigger: 'cancel', to: 'CANCELLED' },
  { from: 'IN_PROGRESS', trigger: 'requeue', to: 'IN_QUEUE' },
  { from: 'FAILED', trigger: 'retry', to: 'IN_QUEUE' },
  { from: 'TIMED_OUT', trigger: 'retry', to: 'IN_QUEUE' },
];

const TABLE: ReadonlyMap<string, JobStatus> = new Map(TRANSITIONS.map((t) => [`${t.from}:${t.trigger}`, t.to]));

/** The state `trigger` leads to from `from`, or undefined when the table has no such move. */
export function lookupTransition(from: JobStatus, trigger: JobTrigger): JobStatus | undefined {
  return TABLE.get(`${from}:${trigger}`);
}

/** The state `trigger` leads to from `from`; throws SW_ILLEGAL_TRANSITION when not allowed. */
export function nextState(from: JobStatus, trigger: JobTrigger, jobId = '?'): JobStatus {
  const to = lookupTransition(from, trigger);
  if (to === undefined) {
    const allowed = TRANSITIONS.filter((t) => t.trigger === trigger).map((t) => t.from);
    throw new ServerlessWorkerError(
      'SW_ILLEGAL_TRANSITION',
      `Job ${jobId} cannot ${trigger} from ${from}: ${trigger} is allowed only from ${allowed.join(' or ')}`,
      { jobId, from, trigger, allowedFrom: allowed },
    );
  }
  return to;
}
