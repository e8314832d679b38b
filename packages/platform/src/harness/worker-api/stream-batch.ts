/**
 * @module harness/worker-api/stream-batch
 * The batch form of a job-stream post: a JSON array of chunks, each `{output, metrics}`
 * with `metrics.stream_index`, the indexes consecutive. The harness advertises it on
 * job-take answers (`x-sw-stream-batch: 64`, job/stream-order.ts); our worker then sends
 * the chunks queued when a post goes out in one body, where it sent one post each (a
 * stream of objects, which cannot be joined, was bound by round trips). Each item is
 * still its own chunk on `/stream`. The real platform's job-stream takes one `{output}` a
 * post and advertises nothing, so our worker never sends it this form.
 *
 * Read here whole before anything is stored: a bad item refuses the post (400
 * SW_INVALID_STREAM_BATCH naming the item), so a batch is stored all or (when a retried
 * post repeats indexes the job already has) the rest of it, never a part chosen by an
 * error. The limits of a single post hold for each item: its output at most 1 MiB
 * (MAX_CHUNK_BYTES), its nesting at most MAX_JSON_DEPTH; the body limit holds for the whole.
 */
import * as z from 'zod';
import { MAX_CHUNK_BYTES, MAX_CHUNKS_AHEAD, MAX_JSON_DEPTH, type StreamChunk, ServerlessWorkerError, jsonShape } from 'serverless-worker/internal';

/** Most chunks in one batch post: the count job-take answers advertise (the harness holds a chunk at most this far ahead). */
export const MAX_BATCH_CHUNKS = MAX_CHUNKS_AHEAD;

const StreamIndexSchema = z
  .number({ error: 'metrics.stream_index must be a whole number from 0' })
  .int({ error: 'metrics.stream_index must be a whole number from 0' })
  .min(0, { error: 'metrics.stream_index must be a whole number from 0' });

/** One item: `output` and `metrics` alone (a key misspelled would otherwise store an empty chunk), `metrics.stream_index` required. */
const BatchItemSchema = z.strictObject(
  {
    output: z.unknown().refine((value) => value !== undefined, { error: 'output is required' }),
    metrics: z.looseObject({ stream_index: StreamIndexSchema }, { error: 'metrics must be an object with stream_index' }),
  },
  { error: 'each item must be an object {"output": ..., "metrics": {"stream_index": N}}' },
);

/** Whether a job-stream body's text is the batch form (a JSON array), told by its first character that is not white space. */
export function isStreamBatch(text: unknown): text is string {
  if (typeof text !== 'string') return false;
  for (let at = 0; at < text.length; at++) {
    const char = text.charCodeAt(at);
    if (char === 0x20 || char === 0x0a || char === 0x0d || char === 0x09) continue;
    return char === 0x5b; // [
  }
  return false;
}

function invalidBatch(message: string, details: Record<string, unknown> = {}): ServerlessWorkerError {
  return new ServerlessWorkerError('SW_INVALID_STREAM_BATCH', `job-stream batch ${message}; nothing of the post was stored`, {
    maxChunks: MAX_BATCH_CHUNKS,
    ...details,
  });
}

/** The array of a batch body's text: nesting within the limit (the array adds one level to a chunk body's), JSON, 1 to MAX_BATCH_CHUNKS items. */
function parseArray(text: string): unknown[] {
  if (jsonShape(text, { maxDepth: MAX_JSON_DEPTH + 2, maxKeys: Number.POSITIVE_INFINITY }).over === 'depth') {
    throw invalidBatch(`nests arrays and objects more than ${MAX_JSON_DEPTH + 2} levels deep (an item's output at most ${MAX_JSON_DEPTH})`, {
      maxDepth: MAX_JSON_DEPTH,
    });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw invalidBatch(`is not JSON: ${(error as Error).message}`);
  }
  if (!Array.isArray(value)) throw invalidBatch('is not a JSON array');
  const items: unknown[] = value;
  if (items.length === 0 || items.length > MAX_BATCH_CHUNKS) {
    throw invalidBatch(`has ${items.length} items: send 1 to ${MAX_BATCH_CHUNKS}`, { items: items.length });
  }
  return items;
}

/** An item's output over MAX_CHUNK_BYTES as JSON: measured only when the whole body is larger than that (no item can be, else). */
function outputBytes(output: unknown): number {
  return Buffer.byteLength(JSON.stringify(output) ?? '');
}

/**
 * The chunks of a batch body, in order, each `{output, metrics}`.
 * @throws ServerlessWorkerError SW_INVALID_STREAM_BATCH naming the first bad item.
 */
export function parseStreamBatch(text: string): StreamChunk[] {
  const items = parseArray(text);
  const measure = Buffer.byteLength(text) > MAX_CHUNK_BYTES;
  const chunks: StreamChunk[] = [];
  let previous: number | undefined;
  for (const [at, raw] of items.entries()) {
    const parsed = BatchItemSchema.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const where = issue && issue.path.length > 0 ? ` (${issue.path.join('.')})` : '';
      throw invalidBatch(`item ${at}${where}: ${issue?.message ?? 'invalid'}`, { item: at });
    }
    const { output, metrics } = parsed.data;
    const index = metrics.stream_index;
    if (previous !== undefined && index !== previous + 1) {
      throw invalidBatch(`item ${at}: metrics.stream_index ${index} does not follow ${previous} (the indexes of a batch are consecutive)`, {
        item: at,
        streamIndex: index,
        expected: previous + 1,
      });
    }
    if (measure && outputBytes(output) > MAX_CHUNK_BYTES) {
      throw invalidBatch(`item ${at}: its output is ${outputBytes(output)} bytes of JSON, over the ${MAX_CHUNK_BYTES} of a chunk`, {
        item: at,
        limit: MAX_CHUNK_BYTES,
      });
    }
    previous = index;
    chunks.push({ output, metrics });
  }
  return chunks;
}
