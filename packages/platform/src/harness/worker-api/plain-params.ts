/**
 * @module harness/worker-api/plain-params
 * The path and query of the worker API's hot routes, read without zod when they are plainly
 * well formed: ids of 1 to 256 characters, a `take` or `attempt` written as a plain decimal
 * in range. Each answers what its schema (bodies.ts) would, or parses with the schema for
 * anything else, so every refusal and its message stay zod's. A worker posts one job-done a
 * job, each read its path, its `take` and its `attempt` with three zod parses (about a tenth
 * of the harness's busy time at concurrency 1, bench/README.md, issue 46 item 2); its body is
 * read so already (bodies.ts, PLAIN_BODIES).
 */
import { parseOrThrow } from 'serverless-worker/internal';
import { isRouteRecord } from '../http/route-record.js';
import { AttemptQuerySchema, JobParamsSchema, TakeOnDoneQuerySchema, WorkerParamsSchema } from './bodies.js';

/** The longest id the schemas accept (bodies.ts, `id`). */
const MAX_ID = 256;
/** A job count as `jobCount` (bodies.ts) accepts it, written plainly: 1 to 10000. */
const COUNT_TEXT = /^[1-9]\d{0,4}$/;
const MAX_COUNT = 10_000;
/** An attempt written plainly: a whole number from 1 (nine digits at most, far past any job's attempts). */
const ATTEMPT_TEXT = /^[1-9]\d{0,8}$/;

function isId(value: unknown): value is string {
  return typeof value === 'string' && value.length >= 1 && value.length <= MAX_ID;
}

/** `{endpointId, workerId}` of a worker route's path. */
export function workerParams(params: unknown): { endpointId: string; workerId: string } {
  if (isRouteRecord(params) && isId(params.endpointId) && isId(params.workerId)) return { endpointId: params.endpointId, workerId: params.workerId };
  return parseOrThrow(WorkerParamsSchema, params, 'SW_INVALID_REQUEST', 'path');
}

/** `{endpointId, workerId, jobId}` of a job-done or job-stream path. */
export function jobParams(params: unknown): { endpointId: string; workerId: string; jobId: string } {
  if (isRouteRecord(params) && isId(params.endpointId) && isId(params.workerId) && isId(params.jobId)) {
    return { endpointId: params.endpointId, workerId: params.workerId, jobId: params.jobId };
  }
  return parseOrThrow(JobParamsSchema, params, 'SW_INVALID_REQUEST', 'path');
}

/** A query's `name` when absent (undefined) or a plain decimal matching `pattern` up to `max`; else null (the schema decides). */
function plainNumber(query: unknown, name: string, pattern: RegExp, max: number): number | undefined | null {
  if (!isRouteRecord(query)) return null;
  const text = query[name];
  if (text === undefined) return undefined;
  if (typeof text !== 'string' || !pattern.test(text)) return null;
  const value = Number(text);
  return value <= max ? value : null;
}

/** job-done's `take=N` (job/take-on-done.ts), undefined when absent. */
export function takeQuery(query: unknown): number | undefined {
  const plain = plainNumber(query, 'take', COUNT_TEXT, MAX_COUNT);
  return plain !== null ? plain : parseOrThrow(TakeOnDoneQuerySchema, query, 'SW_INVALID_REQUEST', 'job-done query').take;
}

/** A job-done's or job-stream's `attempt=N`, undefined when absent; `what` names the post in a refusal. */
export function attemptQuery(query: unknown, what: string): number | undefined {
  const plain = plainNumber(query, 'attempt', ATTEMPT_TEXT, Number.MAX_SAFE_INTEGER);
  return plain !== null ? plain : parseOrThrow(AttemptQuerySchema, query, 'SW_INVALID_REQUEST', `${what} query`).attempt;
}
