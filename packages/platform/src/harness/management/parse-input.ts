/**
 * @module harness/management/parse-input
 * Validates a management request body with its zod schema. A body that is not a JSON
 * object is refused before zod sees it (so the message is about the body, not about
 * "(root)"); a failure caused only by fields an update refuses gets its own code,
 * SW_FIELD_NOT_UPDATABLE, so callers can tell it apart from a malformed value.
 */
import type * as z from 'zod';
import { type ErrorCode, formatIssues, previewValue, ServerlessWorkerError, summarizeIssues } from 'serverless-worker/internal';

export interface ParseInputOptions {
  /** The code of a malformed input. */
  code: ErrorCode;
  /** What the body is, for the message: "template", "network volume update". */
  what: string;
  /** Fields refused by this input; default none. */
  refused?: readonly string[];
}

/** Parse `body` with `schema`, or throw a coded error naming every bad field. */
export function parseInput<S extends z.ZodType>(schema: S, body: unknown, options: ParseInputOptions): z.infer<S> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new ServerlessWorkerError(options.code, `Invalid ${options.what}: the body must be a JSON object, got ${previewValue(body)}`);
  }
  const result = schema.safeParse(body, { reportInput: true });
  if (result.success) return result.data;
  const raw = result.error.issues;
  const issues = summarizeIssues(result.error).map((issue, index) =>
    // An unknown field's issue sits on the body itself: its "received" would be the
    // whole body and its path "(root)", noise in a one-line message.
    raw[index]?.code === 'unrecognized_keys' ? { path: '', message: issue.message } : issue,
  );
  const fields = [...new Set(raw.flatMap((issue) => (issue.code === 'unrecognized_keys' ? issue.keys : [issue.path.map(String).join('.')])))];
  const refused = options.refused ?? [];
  const onlyRefused = fields.every((field) => refused.includes(field));
  const code: ErrorCode = onlyRefused ? 'SW_FIELD_NOT_UPDATABLE' : options.code;
  throw new ServerlessWorkerError(code, `Invalid ${options.what}: ${formatIssues(issues)}`, { fields, issues });
}
