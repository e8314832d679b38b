/**
 * @module harness/queue-api/plain-shapes
 * The queue API's hot path checks the common, well-formed request without zod: a body
 * that is `{"input": {...}}` and nothing else, an endpoint id or job id that matches its
 * pattern, a /runsync query with no `wait` or a plain one. Each answers what the zod
 * schema would for that input, or undefined for anything else, which the caller then
 * parses with the schema (so every error and its message stays zod's). Under /runsync
 * load zod's parse of the body and the path was about 6 % of the server's busy time
 * (bench/README.md, issue 19).
 */
import { type JobRequest, RUNSYNC_WAIT_MS } from 'serverless-worker/internal';
import { isRouteRecord } from '../http/route-record.js';

/** The endpoint id pattern of EndpointParamsSchema (params.ts). */
const ENDPOINT_ID = /^[A-Za-z0-9._-]{1,128}$/;
/** A whole number of milliseconds as msQuery reads it (params.ts). */
const MS_TEXT = /^\d{1,16}$/;
/** The longest job id JobParamsSchema accepts. */
const MAX_JOB_ID = 200;

/** A JSON object as JSON.parse makes it (a body, an input). */
function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/** `{"input": {...}}` with no other field, as JobRequestSchema would answer it; else undefined. */
export function plainJobRequest(body: unknown): JobRequest | undefined {
  if (!isPlainObject(body)) return undefined;
  let input: unknown;
  for (const key in body) {
    if (key !== 'input') return undefined;
    input = body[key];
  }
  if (!isPlainObject(input)) return undefined;
  // zod's record copies the object: so does this (the caller may keep the request).
  return { input: { ...input } };
}

/** The endpoint id of well-formed path parameters; else undefined. */
export function plainEndpointId(params: unknown): string | undefined {
  if (!isRouteRecord(params)) return undefined;
  const id = params.endpointId;
  return typeof id === 'string' && ENDPOINT_ID.test(id) ? id : undefined;
}

/** The endpoint and job id of well-formed path parameters; else undefined. */
export function plainJobParams(params: unknown): { endpointId: string; jobId: string } | undefined {
  const endpointId = plainEndpointId(params);
  if (endpointId === undefined) return undefined;
  const jobId = (params as Record<string, unknown>).jobId;
  return typeof jobId === 'string' && jobId.length >= 1 && jobId.length <= MAX_JOB_ID ? { endpointId, jobId } : undefined;
}

/** Whether a query string has no `name` (then an optional parameter is simply absent, as the schema answers). */
export function lacksQueryKey(query: unknown, name: string): boolean {
  if (query === undefined || query === null) return true;
  return isRouteRecord(query) && query[name] === undefined;
}

/** `wait` of a /runsync or /status-sync query: the default when absent, the value when in range; else undefined. */
export function plainWait(query: unknown): number | undefined {
  if (query === undefined || query === null) return RUNSYNC_WAIT_MS.default;
  if (!isRouteRecord(query)) return undefined;
  const wait = query.wait;
  if (wait === undefined) return RUNSYNC_WAIT_MS.default;
  if (typeof wait !== 'string' || !MS_TEXT.test(wait)) return undefined;
  const ms = Number(wait);
  return ms >= RUNSYNC_WAIT_MS.min && ms <= RUNSYNC_WAIT_MS.max ? ms : undefined;
}
