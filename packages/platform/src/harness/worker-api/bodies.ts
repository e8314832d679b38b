/**
 * @module harness/worker-api/bodies
 * What workers send, parsed with zod: queries, job-done and job-stream bodies, and the
 * error text of a failed job. Bodies are read as text whatever their content type,
 * because the platform's Python SDK posts its JSON as
 * `application/x-www-form-urlencoded`.
 */
import * as z from 'zod';
import { type JobErrorPayload, jsonShape, MAX_JSON_DEPTH, parseOrThrow, previewValue, ServerlessWorkerError } from 'serverless-worker/internal';

const id = (name: string) =>
  z
    .string()
    .min(1, { error: `${name} must not be empty` })
    .max(256, { error: `${name} must be at most 256 characters` });

export const WorkerParamsSchema = z.object({ endpointId: id('endpoint id'), workerId: id('worker id') });
export const JobParamsSchema = WorkerParamsSchema.extend({ jobId: id('job id') });

/** A query parameter counting jobs, 1 to 10 000, every refusal naming it and the range. */
function jobCount(name: string) {
  const error = `${name} must be a whole number from 1 to 10000`;
  return z.coerce.number({ error }).int({ error }).min(1, { error }).max(10_000, { error });
}

export const BatchQuerySchema = z.object({ batch_size: jobCount('batch_size').default(1) });

const oneText = z.union([z.string(), z.array(z.string()).transform((values) => values.join(','))]);

export const PingQuerySchema = z.object({
  /** Comma-separated ids (our worker, newer SDKs) or the parameter repeated (older SDKs). */
  job_id: oneText.optional(),
  runpod_version: oneText.optional(),
  status: oneText.optional(),
  check: oneText.optional(),
  reason: oneText.optional(),
});

/** `attempt=N` on job-done and job-stream: the attempt the post belongs to (our worker sends it back; others send none). */
export const AttemptQuerySchema = z.looseObject({
  attempt: z.coerce
    .number({ error: 'attempt must be a whole number from 1' })
    .int({ error: 'attempt must be a whole number from 1' })
    .min(1, { error: 'attempt must be a whole number from 1' })
    .optional(),
});

/** `take=N` on job-done (job/take-on-done.ts): the jobs to hand out on the answer, at most; `job_in_progress` is read as on job-take (not at all). */
export const TakeOnDoneQuerySchema = z.looseObject({
  take: jobCount('take').optional(),
});

const truthy = z.preprocess((value) => (value === 'true' ? true : value === 'false' ? false : value), z.boolean());

export const DoneBodySchema = z.looseObject({
  output: z.unknown().optional(),
  error: z.unknown().optional(),
  status: z.string().optional(),
  stopPod: truthy.optional(),
});

export const StreamBodySchema = z.looseObject({
  output: z.unknown().optional(),
  metrics: z.record(z.string(), z.unknown()).optional(),
});

type JsonObject = Record<string, unknown>;
const isOptionalObject = (value: unknown): boolean => value === undefined || (typeof value === 'object' && value !== null && !Array.isArray(value));

/**
 * The bodies almost every worker posts, checked without zod: a job-done body whose
 * `status` is absent or a string and `stopPod` absent or a boolean, a job-stream body
 * whose `metrics` is absent or an object. Such a value, fresh from JSON.parse, is what
 * the schema would answer, and is used as it is; anything else goes through the schema
 * (a `stopPod` of "true", a wrong type and its error). A post per job: zod's parse was a
 * share of a busy `--serve-api`'s CPU (bench/README, issue 34, second pass).
 */
const PLAIN_BODIES = new Map<z.ZodType, (value: JsonObject) => boolean>([
  [
    DoneBodySchema,
    (value) => (value.status === undefined || typeof value.status === 'string') && (value.stopPod === undefined || typeof value.stopPod === 'boolean'),
  ],
  [StreamBodySchema, (value) => isOptionalObject(value.metrics)],
]);

/** Whether `raw`, a body's text, nests arrays and objects deeper than a body may (MAX_JSON_DEPTH + 1: the body's own level and its output's). */
export function bodyTooDeep(raw: unknown): boolean {
  if (typeof raw !== 'string' && !Buffer.isBuffer(raw)) return false;
  return jsonShape(raw.toString(), { maxDepth: MAX_JSON_DEPTH + 1, maxKeys: Number.POSITIVE_INFINITY }).over === 'depth';
}

/**
 * A progress post (`"status": "IN_PROGRESS"`) told from its text alone, for a body too deep to
 * parse: a progress update refused leaves the job running, a result refused ends it.
 */
export function looksLikeProgress(raw: unknown): boolean {
  return (typeof raw === 'string' || Buffer.isBuffer(raw)) && /"status"\s*:\s*"IN_PROGRESS"/.test(raw.toString());
}

/** Keys a job-done body may have without `output` or `error`: `{}` and `{"stopPod": true}` end a job with no output. */
const RESULTLESS_KEYS = new Set(['status', 'stopPod']);

/**
 * Refuses a job-done result with neither `output` nor `error` but other keys (`{"foo": 1}`,
 * a typo of `output`): it used to complete the job with no output, silently. `{}` still
 * completes (the platform's Python SDK drops an empty output), so does `"output": null`.
 */
export function checkResultKeys(body: Record<string, unknown>): void {
  if ('output' in body || 'error' in body) return;
  const others = Object.keys(body).filter((key) => !RESULTLESS_KEYS.has(key));
  if (others.length === 0) return;
  throw new ServerlessWorkerError(
    'SW_INVALID_REQUEST',
    `job-done body has neither "output" nor "error" but ${others.map((key) => JSON.stringify(key)).join(', ')}: send {"output": ...} ("output": null for none) or {"error": "..."}; the job was left as it was`,
    { keys: others.slice(0, 20) },
  );
}

/**
 * A text body as JSON: empty is `{}` (or SW_INVALID_REQUEST with `emptyIs: 'refused'`);
 * anything else that is not a JSON object is SW_INVALID_REQUEST.
 */
export function parseJsonObject<S extends z.ZodType>(
  schema: S,
  raw: unknown,
  what: string,
  options: { readonly emptyIs?: 'object' | 'refused' } = {},
): z.infer<S> {
  let value: unknown = raw;
  if (raw === undefined || raw === null || (typeof raw === 'string' && raw.trim() === '')) {
    if (options.emptyIs === 'refused') {
      throw new ServerlessWorkerError(
        'SW_INVALID_REQUEST',
        `${what} body is empty: send {"output": ...} or {"error": "..."} (a JSON object); the job was left as it was`,
      );
    }
    value = {};
  } else if (typeof raw === 'string' || Buffer.isBuffer(raw)) {
    const text = raw.toString();
    // Before JSON.parse: a value too deep for the store's copies and the replies' stringify
    // is refused here (a 4xx: the worker posts an error in its place), never stored.
    const shape = jsonShape(text, { maxDepth: MAX_JSON_DEPTH + 1, maxKeys: Number.POSITIVE_INFINITY });
    if (shape.over === 'depth') {
      throw new ServerlessWorkerError(
        'SW_INVALID_REQUEST',
        `${what} body nests arrays and objects more than ${MAX_JSON_DEPTH + 1} levels deep (its output at most ${MAX_JSON_DEPTH})`,
        {
          maxDepth: MAX_JSON_DEPTH,
        },
      );
    }
    try {
      value = JSON.parse(text);
    } catch (error) {
      throw new ServerlessWorkerError('SW_INVALID_REQUEST', `${what} body is not JSON: ${(error as Error).message}`);
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ServerlessWorkerError('SW_INVALID_REQUEST', `${what} body must be a JSON object, got ${previewValue(value)}`);
  }
  if (value !== raw && PLAIN_BODIES.get(schema)?.(value as JsonObject) === true) return value as z.infer<S>;
  return parseOrThrow(schema, value, 'SW_INVALID_REQUEST', `${what} body`);
}

const optionalText = z.string().optional().catch(undefined);
const ErrorObjectSchema = z.looseObject({
  error_type: optionalText,
  error_message: optionalText,
  error_traceback: optionalText,
  error_code: optionalText,
  hostname: optionalText,
  worker_id: optionalText,
  runtime_version: optionalText,
  // The platform's Python SDK names its version this way.
  runpod_version: optionalText,
});

/**
 * The error a worker posted (`{"error": "<JSON text>"}`) as the job's error payload:
 * JSON text of an object is parsed and its fields kept (missing required ones filled
 * in); any other text (an SDK's "handler: ... traceback: ..." string) becomes the
 * `error_message` unchanged.
 */
export function workerErrorPayload(raw: unknown, workerId: string): JobErrorPayload {
  let value: unknown = raw;
  if (typeof raw === 'string') {
    try {
      value = JSON.parse(raw);
    } catch {
      return textPayload(raw, workerId);
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return textPayload(typeof raw === 'string' ? raw : (JSON.stringify(raw) ?? String(raw)), workerId);
  }
  const fields = ErrorObjectSchema.parse(value);
  const { runpod_version: sdkVersion, ...rest } = fields;
  const payload: JobErrorPayload = {
    ...stripUndefined(rest),
    error_type: fields.error_type ?? 'Error',
    error_message: fields.error_message ?? (typeof raw === 'string' ? raw : JSON.stringify(raw)),
    hostname: fields.hostname ?? 'unknown',
    worker_id: fields.worker_id ?? workerId,
    runtime_version: fields.runtime_version ?? sdkVersion ?? '',
  };
  if (sdkVersion !== undefined) (payload as JobErrorPayload & { runpod_version?: string }).runpod_version = sdkVersion;
  return payload;
}

function textPayload(text: string, workerId: string): JobErrorPayload {
  return { error_type: 'WorkerError', error_message: text, hostname: 'unknown', worker_id: workerId, runtime_version: '' };
}

function stripUndefined(record: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined));
}
