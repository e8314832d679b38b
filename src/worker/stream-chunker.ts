/**
 * @module worker/stream-chunker
 * Turns one value a handler yields into stream chunks `{ output, metrics }` whose
 * serialized output (`JSON.stringify(chunk.output)`, in UTF-8) never exceeds the
 * platform's 1 MiB; joinChunks (worker/join-chunks, re-exported here) turns a whole
 * stream back into the yielded values. The cutting itself is in worker/split-value.
 *
 * How a yielded value travels:
 * - a value whose JSON fits: one chunk, `output` is the value itself;
 * - a string too big: string parts, cut at code-point boundaries (a surrogate pair,
 *   so an emoji, is never cut; a grapheme cluster such as a ZWJ emoji sequence may
 *   span two parts); the parts concatenated give the string back;
 * - bytes (Buffer, Uint8Array, ArrayBuffer, at the top level): always base64 text,
 *   cut at multiples of 3 input bytes, so every part decodes on its own;
 * - an array too big: sub-arrays, concatenated give the array; an element that alone
 *   exceeds the limit travels as JSON-text parts in between;
 * - any other value too big (an object, ...): its JSON text in string parts;
 * - `undefined` (also a function or symbol) at the top level: one chunk with output
 *   `null`, so that every yield leaves a chunk and the yield count stays visible.
 * Anything nested follows `JSON.stringify` (toJSON, dropped undefined keys, a nested
 * Buffer as `{type, data}`). A BigInt or a cycle anywhere throws
 * SW_OUTPUT_NOT_SERIALIZABLE naming where it was found.
 *
 * Metrics of a chunk (handler metrics from `withMetrics` are merged under these; the
 * keys below are reserved and always removed from handler metrics first):
 * - `stream_index`, always: the chunk's 0-based position in the job's stream, across yields.
 * - `part_of`, `part_index`, `part_count`, only when one yield became several chunks:
 *   the `stream_index` of the yield's first chunk, this chunk's 0-based position
 *   within the yield, and how many chunks the yield took. No `part_count`: the chunk
 *   carries a whole yield.
 * - `encoding`, only when `output` is not the value itself: `'base64'` for bytes (a
 *   whole value or a part), `'json'` for a piece of JSON text (join the pieces, then
 *   `JSON.parse`).
 * - `element_index`, on `'json'` pieces of a split array: the index, in the yielded
 *   array, of the element that alone exceeded the limit; its pieces are consecutive.
 */
import { ServerlessWorkerError } from '../job/errors.js';
import type { StreamChunk } from '../job/job.js';
import { MAX_CHUNK_BYTES } from '../job/limits.js';
import { serializeOrThrow } from './serializable-check.js';
import { splitValue, type Piece } from './split-value.js';
import { unwrapMetrics, type HandlerStreamMetrics } from './stream-metrics.js';

export { joinChunks } from './join-chunks.js';

/**
 * Smallest accepted `maxChunkBytes`: 32, room for the parts that cannot be cut, which are
 * a JSON number (at most 24 characters, also inside brackets) and one escaped code point.
 */
export const MIN_CHUNK_BYTES = 32;

/** Options of {@link splitYield}. */
export interface SplitOptions {
  /** Largest `JSON.stringify(chunk.output)` in UTF-8 bytes. Default MAX_CHUNK_BYTES (1 MiB); at least MIN_CHUNK_BYTES. */
  readonly maxChunkBytes?: number;
}

/** The runtime's metrics on every chunk; see the module doc for their meaning. */
export interface ChunkMetrics {
  readonly stream_index: number;
  readonly part_of?: number;
  readonly part_index?: number;
  readonly part_count?: number;
  readonly encoding?: 'base64' | 'json';
  readonly element_index?: number;
  readonly [key: string]: unknown;
}

/** Metric keys the chunker owns; a handler's metrics of the same name are dropped. */
export const RESERVED_METRIC_KEYS = ['stream_index', 'part_of', 'part_index', 'part_count', 'encoding', 'element_index'] as const;

/**
 * Splits one yielded value into chunks whose serialized output is at most
 * `options.maxChunkBytes` (default 1 MiB) UTF-8 bytes. The chunks get `stream_index`
 * `startIndex`, `startIndex + 1`, ...; the caller keeps the running index across yields
 * (the next yield starts at `startIndex + chunks.length`). A value wrapped by
 * `withMetrics` has its metrics merged into every chunk's metrics. A value that fits is
 * not copied: post (or serialize) its chunk before the generator runs on and mutates it.
 * @throws ServerlessWorkerError SW_OUTPUT_NOT_SERIALIZABLE for a BigInt or a cycle,
 *   SW_INVALID_OPTIONS for a bad `maxChunkBytes` or `startIndex`.
 */
export function splitYield(yielded: unknown, startIndex: number, options?: SplitOptions): StreamChunk[] {
  if (!Number.isSafeInteger(startIndex) || startIndex < 0) {
    throw new ServerlessWorkerError('SW_INVALID_OPTIONS', `splitYield: startIndex should be a non-negative integer, instead got ${String(startIndex)}`);
  }
  const limit = options?.maxChunkBytes === undefined ? MAX_CHUNK_BYTES : checkLimit(options.maxChunkBytes);
  const { value, metrics } = unwrapMetrics(yielded);
  const extra = metrics === undefined ? undefined : handlerMetrics(metrics);
  // The common case, a token or a line: each UTF-16 unit escapes to at most 6 bytes,
  // so such a string fits without being measured.
  if (typeof value === 'string' && value.length * 6 + 2 <= limit) {
    return [{ output: value, metrics: { ...extra, stream_index: startIndex } }];
  }
  const pieces = splitValue(value, limit);
  if (pieces.length === 1) {
    const only = pieces[0] as Piece;
    const m = only.encoding === undefined ? { stream_index: startIndex } : { stream_index: startIndex, encoding: only.encoding };
    return [{ output: only.output, metrics: { ...extra, ...m } }];
  }
  const chunks: StreamChunk[] = new Array<StreamChunk>(pieces.length);
  for (let i = 0; i < pieces.length; i++) {
    const p = pieces[i] as Piece;
    const m: Record<string, unknown> = { ...extra, stream_index: startIndex + i, part_of: startIndex, part_index: i, part_count: pieces.length };
    if (p.encoding !== undefined) m.encoding = p.encoding;
    if (p.element_index !== undefined) m.element_index = p.element_index;
    chunks[i] = { output: p.output, metrics: m };
  }
  return chunks;
}

function checkLimit(max: unknown): number {
  if (typeof max !== 'number' || !Number.isInteger(max) || max < MIN_CHUNK_BYTES) {
    throw new ServerlessWorkerError('SW_INVALID_OPTIONS', `maxChunkBytes should be an integer of at least ${MIN_CHUNK_BYTES}, instead got ${String(max)}`);
  }
  return max;
}

function handlerMetrics(metrics: HandlerStreamMetrics): Readonly<Record<string, unknown>> {
  serializeOrThrow(metrics, 'metrics');
  // Copy only when a reserved key must go: `delete` would slow every later spread.
  if (!RESERVED_METRIC_KEYS.some((key) => Object.hasOwn(metrics, key))) return metrics;
  const reserved: ReadonlySet<string> = new Set(RESERVED_METRIC_KEYS);
  return Object.fromEntries(Object.entries(metrics).filter(([key]) => !reserved.has(key)));
}
