/**
 * @module testing/job-error
 * A failed job's `error`, read the same from every place a test meets it. The dry run and
 * `runJob` give it as an object; `/runsync`, `/status` and the webhooks give it as a JSON
 * string, as the platform does (its shape, which clients read). `jobError(result)` takes
 * either and answers one typed object, so one assertion works against both.
 */
import * as z from 'zod';
import { previewValue } from '../job/index.js';

/** A failed job's error, as the runtime reports it (the platform's reference worker's field names). */
export interface JobErrorInfo {
  readonly error_type?: string;
  readonly error_message: string;
  readonly error_traceback?: string;
  /** Our stable code (SW_...), when the runtime knows it. */
  readonly error_code?: string;
  readonly hostname?: string;
  readonly worker_id?: string;
  readonly runtime_version?: string;
  /** Zod issues, for SW_INPUT_VALIDATION. */
  readonly issues?: unknown;
}

const JobErrorInfoSchema = z.looseObject({
  error_type: z.string().optional(),
  error_message: z.string(),
  error_traceback: z.string().optional(),
  error_code: z.string().optional(),
  hostname: z.string().optional(),
  worker_id: z.string().optional(),
  runtime_version: z.string().optional(),
  issues: z.unknown().optional(),
});

/**
 * The error of `result` (a `runJob`/`streamJob` result, a dry run record, a `/runsync` or
 * `/status` body: anything with an `error`) as one object; undefined when it has none (a
 * COMPLETED job). A JSON string is parsed; a string that is not JSON is the message. Throws
 * a TypeError naming what it got when `error` is neither a string nor an error object.
 */
export function jobError(result: object | null | undefined): JobErrorInfo | undefined {
  const error: unknown = result !== null && result !== undefined && 'error' in result ? result.error : undefined;
  if (error === undefined || error === null) return undefined;
  let value: unknown = error;
  if (typeof error === 'string') {
    try {
      value = JSON.parse(error);
    } catch {
      return { error_message: error };
    }
    if (typeof value === 'string') return { error_message: value };
  }
  const parsed = JobErrorInfoSchema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw new TypeError(
    `jobError: expected result.error to be a job error (an object with error_message, or its JSON text as /status gives it), got ${previewValue(error)}`,
  );
}
