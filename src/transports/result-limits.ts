/**
 * @module transports/result-limits
 * What a transport knows about the results the platform accepts: the size limit of a
 * job-done body, the SW_RESULT_TOO_LARGE error of a result over it, and the reading of
 * the platform's answer to a result post.
 */
import { Buffer } from 'node:buffer';
import { ServerlessWorkerError } from '../job/index.js';
import type { ResultReceipt } from './transport.js';

/** The worker API's limit of a job-done body, bytes (20 MB). */
export const DEFAULT_MAX_RESULT_BYTES = 20_000_000;

/**
 * Throws SW_RESULT_TOO_LARGE when `body` (the serialized result post) is over `limit`
 * bytes; the message gives the size, the limit and the fix. `streamed`: the final post
 * of a streaming job, whose items already reached /stream, so the body is too large only
 * because aggregateStream repeats them in the result: the fix is to turn that off.
 */
export function assertResultFits(jobId: string, body: string, limit: number | undefined, streamed = false): void {
  if (limit === undefined) return;
  // Every UTF-16 unit is at most 3 UTF-8 bytes: most bodies pass without counting.
  if (body.length * 3 <= limit) return;
  const bytes = Buffer.byteLength(body);
  if (bytes <= limit) return;
  const fix = streamed
    ? 'its stream items did reach /stream; the result repeats them because aggregateStream is on: turn aggregateStream off (the result then holds no items), ' +
      "or upload the aggregated output to the job's s3Config bucket and return the URL"
    : "stream the output instead (yield it in parts), or upload it to the job's s3Config bucket and return the URL";
  throw new ServerlessWorkerError(
    'SW_RESULT_TOO_LARGE',
    `The ${streamed ? 'aggregated stream result' : 'result'} of job ${jobId} is ${bytes} bytes as JSON, over the platform's limit of ${limit} bytes for a result, so it was not posted: ${fix}`,
    { jobId, bytes, limitBytes: limit, ...(streamed ? { aggregateStream: true } : {}) },
  );
}

/**
 * What the platform made of a result, from its 2xx answer: the harness answers
 * `{acknowledged, applied, reason?}`; any other answer (the platform's) counts as applied.
 */
export function readResultReceipt(text: string): ResultReceipt {
  if (!text.includes('"applied"')) return { applied: true };
  try {
    return receiptOf(JSON.parse(text));
  } catch {
    return { applied: true };
  }
}

/** readResultReceipt of an answer's body already parsed. */
export function receiptOf(body: unknown): ResultReceipt {
  if (typeof body !== 'object' || body === null) return { applied: true };
  const { applied, reason } = body as { applied?: unknown; reason?: unknown };
  if (applied !== false) return { applied: true };
  return typeof reason === 'string' ? { applied: false, reason } : { applied: false };
}
