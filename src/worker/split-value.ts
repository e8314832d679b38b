/**
 * @module worker/split-value
 * Cuts one yielded value into the outputs of its chunks, each at most a byte limit once
 * serialized: the value itself when it fits, else string parts, base64 parts of bytes,
 * sub-arrays (with JSON-text pieces of an element too big alone), or JSON-text parts.
 * The wire format is described in worker/stream-chunker.
 */
import { Buffer } from 'node:buffer';
import { jsonStringSize } from './json-size.js';
import { serializeOrThrow } from './serializable-check.js';
import { CUT_AIM, splitString } from './split-string.js';

/** The output of one chunk, with the metrics that say how to read it. */
export interface Piece {
  readonly output: unknown;
  /** `'base64'` for bytes, `'json'` for a piece of JSON text; absent when output is the value (or a part of it) as is. */
  readonly encoding?: 'base64' | 'json';
  /** On `'json'` pieces of a split array: the index of the element they belong to. */
  readonly element_index?: number;
}

/**
 * Cuts `value` (already unwrapped from withMetrics) into pieces whose
 * `JSON.stringify(output)` is at most `limit` UTF-8 bytes; one piece when it fits.
 * `undefined`, a function or a symbol gives one piece with output `null`.
 * @throws ServerlessWorkerError SW_OUTPUT_NOT_SERIALIZABLE for a BigInt or a cycle.
 */
export function splitValue(value: unknown, limit: number): Piece[] {
  if (value === undefined || typeof value === 'function' || typeof value === 'symbol') return [{ output: null }];
  if (value === null || typeof value === 'number' || typeof value === 'boolean') return [{ output: value }];
  if (typeof value === 'string') return splitTopString(value, limit);
  const buffer = asBuffer(value);
  if (buffer !== undefined) return splitBytes(buffer, limit);
  const json = serializeOrThrow(value, 'output');
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
  if (s.length + 2 <= limit && jsonStringSize(s) <= limit) return [{ output: s }];
  return splitString(s, limit).map((part) => ({ output: part }));
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
    const end = Math.min(arr.length, state.pos + Math.max(1, Math.floor((limit / state.ratio) * CUT_AIM)));
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
