/**
 * @module job/parse
 * Turns zod failures into one readable message that names each field, what it
 * allows, and the value it received, and wraps it in a coded error.
 */
import type * as z from 'zod';
import { ServerlessWorkerError } from './errors.js';
import type { ErrorCode } from './error-codes.js';
import { JobRequestSchema, type JobRequest } from './request-schema.js';

/** A short, log-safe preview of a received value. */
export function previewValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (typeof value === 'bigint') return `${value}n`;
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = Object.prototype.toString.call(value);
  }
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

export interface IssueSummary {
  path: string;
  message: string;
  received?: string;
}

/** One entry per zod issue, with a dotted path and the received value. */
export function summarizeIssues(error: z.ZodError): IssueSummary[] {
  return error.issues.map((issue) => {
    const path = issue.path.map(String).join('.') || '(root)';
    const received = 'input' in issue ? previewValue(issue.input) : undefined;
    return received === undefined ? { path, message: issue.message } : { path, message: issue.message, received };
  });
}

/** `"policy.ttl must be from 10000 to 604800000 ms (got 5)"`, one per issue, joined by "; ". */
export function formatIssues(issues: IssueSummary[]): string {
  return issues
    .map((issue) => {
      const message = issue.message.startsWith(issue.path) ? issue.message : `${issue.path}: ${issue.message}`;
      return issue.received === undefined ? message : `${message} (got ${issue.received})`;
    })
    .join('; ');
}

/** Parse with `schema`, or throw a ServerlessWorkerError of `code` naming every bad field. */
export function parseOrThrow<S extends z.ZodType>(schema: S, value: unknown, code: ErrorCode, what: string): z.infer<S> {
  return parseWith(schema, value, code, what, REPEATED_PARSE);
}

/**
 * parseOrThrow for a value read once per process (options, environment): zod's compiled
 * fast path for objects is skipped, whose code generation and compilation cost more than
 * the one parse it speeds up (about 5 ms of a worker's start, bench/README.md).
 */
export function parseOnceOrThrow<S extends z.ZodType>(schema: S, value: unknown, code: ErrorCode, what: string): z.infer<S> {
  return parseWith(schema, value, code, what, ONCE_PARSE);
}

const REPEATED_PARSE = { reportInput: true } as const;
const ONCE_PARSE = { reportInput: true, jitless: true } as const;

function parseWith<S extends z.ZodType>(
  schema: S,
  value: unknown,
  code: ErrorCode,
  what: string,
  params: typeof REPEATED_PARSE | typeof ONCE_PARSE,
): z.infer<S> {
  const result = schema.safeParse(value, params);
  if (result.success) return result.data;
  const issues = summarizeIssues(result.error);
  throw new ServerlessWorkerError(code, `Invalid ${what}: ${formatIssues(issues)}`, { issues });
}

/** Validate a `/run` or `/runsync` body; throws SW_INVALID_JOB_REQUEST. */
export function parseJobRequest(body: unknown): JobRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new ServerlessWorkerError('SW_INVALID_JOB_REQUEST', `Invalid job request: expected a JSON object like {"input": {...}}, got ${previewValue(body)}`);
  }
  return parseOrThrow(JobRequestSchema, body, 'SW_INVALID_JOB_REQUEST', 'job request');
}
