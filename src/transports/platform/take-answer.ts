/**
 * @module transports/platform/take-answer
 * What a job-take answer means, as the protocol says: 204, 400, an empty body or a
 * non-JSON content type are "no job now"; 429 is "back off"; a JSON object is one job
 * and a JSON array a batch. A job needs `id` and `input`; every other key (webhook,
 * policy, s3Config, ...) passes through to the handler unchanged.
 */
import * as z from 'zod';
import type { Job } from '../../job/index.js';
import type { HttpAnswer } from './http-client.js';

const DeliveredJobSchema = z.looseObject({
  id: z.string().min(1),
  // The platform validates input at submission; a worker passes it on unchanged.
  input: z.unknown().refine((value) => value !== undefined && value !== null, { error: 'input is missing' }),
  // Our harness's attempt number; anything else in that key is left out rather than sent back.
  attempt: z.number().int().min(1).optional().catch(undefined),
});

/** How to go on after a take. */
export type TakeOutcome =
  | { readonly kind: 'jobs'; readonly jobs: Job[]; readonly invalid: number }
  | { readonly kind: 'none'; readonly note?: string }
  | { readonly kind: 'backoff'; readonly retryAfterMs?: number }
  | { readonly kind: 'error'; readonly status: number; readonly text: string };

function isJsonType(contentType: string): boolean {
  return contentType === 'application/json' || contentType.endsWith('+json');
}

/**
 * The shape almost every delivered job has, checked without zod: an object with a
 * non-empty string `id`, an `input` that is neither null nor missing, and no `attempt`
 * or a whole one from 1. Such an item is what DeliveredJobSchema would answer (a value
 * fresh from JSON.parse, so it is used as it is rather than copied); anything else
 * goes through the schema. Per job, zod's parse was a share of a no-op job's CPU.
 */
function isPlainDeliveredJob(item: unknown): item is Job {
  if (typeof item !== 'object' || item === null || Array.isArray(item)) return false;
  const { id, input, attempt } = item as { id?: unknown; input?: unknown; attempt?: unknown };
  if (typeof id !== 'string' || id.length === 0 || input === undefined || input === null) return false;
  return attempt === undefined ? !Object.hasOwn(item, 'attempt') : Number.isSafeInteger(attempt) && (attempt as number) >= 1;
}

/** Classify one take answer. */
export function readTakeAnswer(answer: HttpAnswer): TakeOutcome {
  const { status } = answer;
  if (status === 204 || status === 400) return { kind: 'none' };
  if (status === 429) return answer.retryAfterMs !== undefined ? { kind: 'backoff', retryAfterMs: answer.retryAfterMs } : { kind: 'backoff' };
  if (status < 200 || status >= 300) return { kind: 'error', status, text: answer.text.slice(0, 200) };
  if (answer.text.trim() === '') return { kind: 'none' };
  if (!isJsonType(answer.contentType)) return { kind: 'none', note: `content type ${answer.contentType || 'missing'}` };
  let body: unknown;
  try {
    body = JSON.parse(answer.text);
  } catch {
    return { kind: 'none', note: 'body is not JSON' };
  }
  if (body === null) return { kind: 'none' };
  const { jobs, invalid } = readJobs(Array.isArray(body) ? body : [body]);
  return jobs.length === 0 && invalid === 0 ? { kind: 'none' } : { kind: 'jobs', jobs, invalid };
}

/** The jobs among `items` (a take answer's, or the `jobs` of a job-done answer that took some), and how many were not jobs. */
export function readJobs(items: readonly unknown[]): { jobs: Job[]; invalid: number } {
  const jobs: Job[] = [];
  let invalid = 0;
  for (const item of items) {
    if (isPlainDeliveredJob(item)) {
      jobs.push(item);
      continue;
    }
    const parsed = DeliveredJobSchema.safeParse(item);
    if (parsed.success) jobs.push(parsed.data as Job);
    else invalid++;
  }
  return { jobs, invalid };
}
