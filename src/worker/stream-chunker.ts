/**
 * @module worker/stream-chunker
 * Turns one value a handler yields into stream chunks `{ output, metrics }` whose
 * serialized output (`JSON.stringify(chunk.output)`, in UTF-8) never exceeds the
 * platform's 1 MiB, and turns a whole stream back into the yielded values.
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
import { Buffer } from 'node:buffer';
import { ServerlessWorkerError } from '../job/errors.js';
import type { StreamChunk } from '../job/job.js';
import { MAX_CHUNK_BYTES } from '../job/limits.js';
import { unwrapMetrics, type HandlerStreamMetrics } from './stream-metrics.js';

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

interface Piece {
  readonly output: unknown;
  readonly encoding?: 'base64' | 'json';
  readonly element_index?: number;
}

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
  const pieces = split(value, limit);
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
  serialize(metrics, 'metrics');
  // Copy only when a reserved key must go: `delete` would slow every later spread.
  if (!RESERVED_METRIC_KEYS.some((key) => Object.hasOwn(metrics, key))) return metrics;
  const reserved: ReadonlySet<string> = new Set(RESERVED_METRIC_KEYS);
  return Object.fromEntries(Object.entries(metrics).filter(([key]) => !reserved.has(key)));
}

function split(value: unknown, limit: number): Piece[] {
  if (value === undefined || typeof value === 'function' || typeof value === 'symbol') return [{ output: null }];
  if (value === null || typeof value === 'number' || typeof value === 'boolean') return [{ output: value }];
  if (typeof value === 'string') return splitTopString(value, limit);
  const buffer = asBuffer(value);
  if (buffer !== undefined) return splitBytes(buffer, limit);
  const json = serialize(value, 'output');
  if (json === undefined) return [{ output: null }]; // a toJSON that returned undefined
  // JSON text is at most 3 UTF-8 bytes per UTF-16 unit (escapes are ASCII).
  if (json.length * 3 <= limit) return [{ output: value }];
  const size = Buffer.byteLength(json);
  if (size <= limit) return [{ output: value }];
  // An array with its own toJSON serializes as something else: treat it as any value.
  if (Array.isArray(value) && typeof (value as { toJSON?: unknown }).toJSON !== 'function') return splitArray(value, size, limit);
  return splitString(json, limit).map((text) => ({ output: text, encoding: 'json' as const }));
}

function splitTopString(s: string, limit: number): Piece[] {
  // At least one byte per unit plus the quotes: longer strings cannot fit, skip measuring.
  if (s.length + 2 <= limit && escapedSize(s) <= limit) return [{ output: s }];
  return splitString(s, limit).map((part) => ({ output: part }));
}

const isHigh = (unit: number): boolean => unit >= 0xd800 && unit <= 0xdbff;
const isLow = (unit: number): boolean => unit >= 0xdc00 && unit <= 0xdfff;
// Cuts aim a little under the estimate, since measuring a part that turns out too big
// costs a second measure; after an overshoot they aim further under.
const AIM = 0.995;
const SHRINK = 0.97;

// String.prototype.isWellFormed ships with Node 20 (V8 11.3) but is only typed in TypeScript's ES2024 lib.
const isWellFormed = (String.prototype as unknown as { isWellFormed(this: string): boolean }).isWellFormed;
const NEEDS_ESCAPE = /["\\\x00-\x1f]/;
// Extra bytes JSON escaping adds to an ASCII byte: 1 for \" \\ \b \t \n \f \r, 5 for \u00XX.
const ESCAPE_EXTRA = new Uint8Array(128);
for (let c = 0; c < 0x20; c++) ESCAPE_EXTRA[c] = 5;
for (const c of [0x08, 0x09, 0x0a, 0x0c, 0x0d, 0x22, 0x5c]) ESCAPE_EXTRA[c] = 1;
// Reused across calls: encoding a part into it and scanning its bytes is 2 to 4 times
// as fast as JSON.stringify + Buffer.byteLength, and allocates nothing.
let scratch: { readonly bytes: Buffer; readonly words: Uint32Array } | undefined;
const SCRATCH_MAX = 8 * 1024 * 1024;

function scratchFor(need: number): { readonly bytes: Buffer; readonly words: Uint32Array } {
  if (scratch !== undefined && scratch.bytes.length >= need) return scratch;
  // Our own ArrayBuffer, so the word view is aligned (a pooled Buffer may not be).
  const memory = new ArrayBuffer(Math.ceil(need / 4) * 4);
  const fresh = { bytes: Buffer.from(memory), words: new Uint32Array(memory) };
  if (need <= SCRATCH_MAX) scratch = fresh;
  return fresh;
}

/** UTF-8 size of JSON.stringify(s), quotes included, without building the escaped string. */
function escapedSize(s: string): number {
  if (!isWellFormed.call(s)) return escapedSizeSlow(s);
  // Most text needs no escaping at all: its size is its UTF-8 size plus the quotes.
  if (!NEEDS_ESCAPE.test(s)) return Buffer.byteLength(s) + 2;
  const { bytes, words } = scratchFor(s.length * 3); // well-formed: at most 3 bytes a unit
  const n = bytes.write(s, 0, 'utf8');
  let size = n + 2;
  const fullWords = n >>> 2;
  for (let w = 0; w < fullWords; w++) {
    // Four bytes at once: does any of them need escaping (< 0x20, '"' or '\\')? Exact
    // about "none" (bytes >= 0x80 never match); a rare false "some" costs a byte check.
    const x = words[w] as number;
    const quote = x ^ 0x22222222;
    const backslash = x ^ 0x5c5c5c5c;
    const flags = ((x - 0x20202020) & ~x) | ((quote - 0x01010101) & ~quote) | ((backslash - 0x01010101) & ~backslash);
    if ((flags & 0x80808080) !== 0) size += escapeExtra(bytes, w << 2, (w << 2) + 4);
  }
  return size + escapeExtra(bytes, fullWords << 2, n);
}

function escapeExtra(bytes: Buffer, from: number, to: number): number {
  let extra = 0;
  for (let i = from; i < to; i++) {
    const b = bytes[i] as number;
    if (b < 0x80) extra += ESCAPE_EXTRA[b] as number;
  }
  return extra;
}

/** escapedSize for strings with lone surrogates, which JSON writes as 6-byte \uXXXX escapes. */
function escapedSizeSlow(s: string): number {
  let size = 2;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) size += 1 + (ESCAPE_EXTRA[c] as number);
    else if (c < 0x800) size += 2;
    else if (!isHigh(c) && !isLow(c)) size += 3;
    else if (isHigh(c) && i + 1 < s.length && isLow(s.charCodeAt(i + 1))) {
      size += 4;
      i++;
    } else size += 6;
  }
  return size;
}

/**
 * Cuts `s` into parts whose JSON-escaped UTF-8 size is at most `limit`, at code-point
 * boundaries. Linear: each cut is estimated from the bytes-per-unit ratio of the last
 * part, measured once, and shrunk only when over.
 */
function splitString(s: string, limit: number): string[] {
  const parts: string[] = [];
  const budget = limit - 2; // the quotes
  let ratio = 1; // bytes per UTF-16 unit; start from ASCII, learn from each part
  let pos = 0;
  while (pos < s.length) {
    let n = Math.max(1, Math.floor((budget / ratio) * (ratio === 1 ? 1 : AIM)));
    for (;;) {
      let end = Math.min(s.length, pos + n);
      if (end < s.length && isHigh(s.charCodeAt(end - 1)) && isLow(s.charCodeAt(end))) {
        end = end - 1 > pos ? end - 1 : end + 1; // never cut a pair; a lone pair fits any limit
      }
      const part = s.slice(pos, end);
      const bytes = escapedSize(part);
      const units = end - pos;
      if (bytes <= limit) {
        parts.push(part);
        ratio = (bytes - 2) / units;
        pos = end;
        break;
      }
      // One unit is at most 6 bytes (8 with quotes) and a pair 4 (6), both far under
      // MIN_CHUNK_BYTES, so shrinking always ends.
      n = Math.max(1, Math.min(units - 1, Math.floor(((units * budget) / (bytes - 2)) * SHRINK)));
    }
  }
  return parts;
}

function asBuffer(value: unknown): Buffer | undefined {
  if (Buffer.isBuffer(value)) return value;
  if (value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  if (value instanceof ArrayBuffer) return Buffer.from(value);
  return undefined;
}

function splitBytes(bytes: Buffer, limit: number): Piece[] {
  // base64 needs no JSON escaping: 4 characters per 3 bytes, plus the quotes.
  const step = Math.floor((limit - 2) / 4) * 3;
  if (bytes.length <= step) return [{ output: bytes.toString('base64'), encoding: 'base64' }];
  const pieces: Piece[] = [];
  for (let at = 0; at < bytes.length; at += step) {
    pieces.push({ output: bytes.subarray(at, at + step).toString('base64'), encoding: 'base64' });
  }
  return pieces;
}

/**
 * Cuts an array into sub-arrays that fit. Most arrays are uniform, so a slice is sized
 * from the bytes per element seen so far and measured once; when it comes out over the
 * limit, one sub-array is packed exactly, element by element, instead of retrying
 * (retries would re-serialize a huge element each time). Every element is thus
 * serialized a bounded number of times.
 */
function splitArray(arr: readonly unknown[], totalBytes: number, limit: number): Piece[] {
  const pieces: Piece[] = [];
  const state = { pos: 0, ratio: totalBytes / arr.length }; // ratio: bytes per element
  while (state.pos < arr.length) {
    const end = Math.min(arr.length, state.pos + Math.max(1, Math.floor((limit / state.ratio) * AIM)));
    const slice = arr.slice(state.pos, end);
    const bytes = Buffer.byteLength(JSON.stringify(slice));
    if (bytes <= limit) {
      pieces.push({ output: slice });
      state.ratio = bytes / slice.length;
      state.pos = end;
    } else {
      packExact(arr, limit, pieces, state);
    }
  }
  return pieces;
}

/**
 * Packs one sub-array from `state.pos` by exact element sizes, followed by the JSON-text
 * pieces of an element that alone is over the limit, if that is what stopped it.
 */
function packExact(arr: readonly unknown[], limit: number, pieces: Piece[], state: { pos: number; ratio: number }): void {
  const start = state.pos;
  let size = 2; // the brackets
  let i = start;
  for (; i < arr.length; i++) {
    const text = JSON.stringify(arr[i]) ?? 'null'; // as JSON.stringify writes it inside an array
    const bytes = Buffer.byteLength(text);
    if (bytes + 2 > limit) {
      if (i > start) pieces.push({ output: arr.slice(start, i) });
      for (const part of splitString(text, limit)) pieces.push({ output: part, encoding: 'json', element_index: i });
      state.pos = i + 1;
      if (i > start) state.ratio = size / (i - start);
      return;
    }
    const grown = size + bytes + (i > start ? 1 : 0); // a comma between elements
    if (grown > limit) break;
    size = grown;
  }
  pieces.push({ output: arr.slice(start, i) });
  state.pos = i;
  state.ratio = size / (i - start);
}

/** JSON.stringify, with failures turned into SW_OUTPUT_NOT_SERIALIZABLE naming the spot. */
function serialize(value: unknown, root: string): string | undefined {
  try {
    return JSON.stringify(value);
  } catch (error) {
    let found: string | undefined;
    try {
      found = findUnserializable(value, root);
    } catch {
      found = undefined; // a getter or toJSON that throws again, or nesting too deep to walk
    }
    const reason = found ?? `${root} (${error instanceof Error ? error.message : String(error)})`;
    throw new ServerlessWorkerError(
      'SW_OUTPUT_NOT_SERIALIZABLE',
      `Yielded ${root} cannot be serialized to JSON: ${reason}. Convert BigInt to string and break cycles.`,
      { found: reason },
      { cause: error },
    );
  }
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

/** Walks `value` as JSON.stringify would and describes the first BigInt or cycle. */
function findUnserializable(value: unknown, root: string): string | undefined {
  const ancestors = new Map<object, string>();
  const visit = (input: unknown, path: string, key: string): string | undefined => {
    let v = input;
    if ((typeof v === 'object' && v !== null) || typeof v === 'bigint') {
      const toJSON = (v as { toJSON?: unknown }).toJSON;
      if (typeof toJSON === 'function') {
        try {
          v = toJSON.call(v, key) as unknown;
        } catch (error) {
          return `a toJSON() that threw at ${path} (${error instanceof Error ? error.message : String(error)})`;
        }
      }
    }
    if (typeof v === 'bigint') return `a BigInt at ${path}`;
    if (typeof v !== 'object' || v === null) return undefined;
    const seen = ancestors.get(v);
    if (seen !== undefined) return `a cycle at ${path} (it refers back to ${seen})`;
    ancestors.set(v, path);
    try {
      if (Array.isArray(v)) {
        for (let i = 0; i < v.length; i++) {
          const found = visit(v[i] as unknown, `${path}[${i}]`, String(i));
          if (found !== undefined) return found;
        }
      } else {
        for (const k of Object.keys(v)) {
          const childPath = IDENTIFIER.test(k) ? `${path}.${k}` : `${path}[${JSON.stringify(k)}]`;
          const found = visit((v as Record<string, unknown>)[k], childPath, k);
          if (found !== undefined) return found;
        }
      }
    } finally {
      ancestors.delete(v);
    }
    return undefined;
  };
  return visit(value, root, '');
}

/**
 * Rebuilds the yielded values from a job's stream, the inverse of {@link splitYield}
 * over all its yields: whole chunks give their output (base64 decoded to a Buffer),
 * split yields are joined (strings concatenated, bytes decoded and concatenated,
 * arrays concatenated, JSON text joined and parsed). Parts of one yield may arrive
 * out of order; the result keeps the order in which yields first appear.
 * @throws ServerlessWorkerError SW_INTERNAL when a yield's parts are incomplete or malformed.
 */
export function joinChunks(chunks: readonly StreamChunk[]): unknown[] {
  const values: unknown[] = [];
  const open = new Map<number, { slot: number; parts: StreamChunk[]; received: number }>();
  for (const chunk of chunks) {
    const m = chunk.metrics ?? {};
    const count = m.part_count;
    if (count === undefined) {
      values.push(m.encoding === 'base64' ? Buffer.from(text(chunk), 'base64') : m.encoding === 'json' ? (JSON.parse(text(chunk)) as unknown) : chunk.output);
      continue;
    }
    const of = m.part_of;
    const index = m.part_index;
    if (typeof of !== 'number' || typeof index !== 'number' || typeof count !== 'number' || index < 0 || index >= count) {
      throw malformed(`a chunk with part_count has bad part_of/part_index (metrics ${JSON.stringify(m)})`);
    }
    let group = open.get(of);
    if (group === undefined) {
      group = { slot: values.length, parts: new Array<StreamChunk>(count), received: 0 };
      values.push(undefined);
      open.set(of, group);
    }
    if (group.parts.length !== count || group.parts[index] !== undefined) throw malformed(`part ${index} of the yield at ${of} is inconsistent or repeated`);
    group.parts[index] = chunk;
    if (++group.received === count) {
      values[group.slot] = joinParts(group.parts);
      open.delete(of);
    }
  }
  if (open.size > 0) throw malformed(`the yields at stream_index ${[...open.keys()].join(', ')} are missing parts`);
  return values;
}

function joinParts(parts: readonly StreamChunk[]): unknown {
  const first = (parts[0] as StreamChunk).metrics ?? {};
  if (first.encoding === 'base64') return Buffer.concat(parts.map((p) => Buffer.from(text(p), 'base64')));
  const isArray = parts.some((p) => Array.isArray(p.output) || p.metrics?.element_index !== undefined);
  if (isArray) return joinArray(parts);
  const joined = parts.map(text).join('');
  return first.encoding === 'json' ? (JSON.parse(joined) as unknown) : joined;
}

function joinArray(parts: readonly StreamChunk[]): unknown[] {
  const result: unknown[] = [];
  let pending: string[] = [];
  let pendingIndex: unknown;
  const flush = (): void => {
    if (pending.length > 0) result.push(JSON.parse(pending.join('')) as unknown);
    pending = [];
    pendingIndex = undefined;
  };
  for (const p of parts) {
    const elementIndex = p.metrics?.element_index;
    if (elementIndex !== undefined) {
      if (elementIndex !== pendingIndex) flush();
      pendingIndex = elementIndex;
      pending.push(text(p));
      continue;
    }
    flush();
    if (!Array.isArray(p.output)) throw malformed('a part of a split array is neither a sub-array nor an element piece');
    for (const element of p.output as unknown[]) result.push(element);
  }
  flush();
  return result;
}

function text(chunk: StreamChunk): string {
  if (typeof chunk.output !== 'string') throw malformed(`expected text output at stream_index ${String(chunk.metrics?.stream_index)}`);
  return chunk.output;
}

function malformed(what: string): ServerlessWorkerError {
  return new ServerlessWorkerError('SW_INTERNAL', `joinChunks: malformed stream: ${what}`);
}
