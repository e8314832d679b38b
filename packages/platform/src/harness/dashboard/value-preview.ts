/**
 * @module harness/dashboard/value-preview
 * Large values never block a dashboard page: a job's input, output, error and stream
 * chunks reach the page (its JSON answers and every live message) as previews with
 * their size. A value up to the preview limit travels whole; a larger one travels as
 * the beginning of its text, and the page loads the rest on demand
 * (`GET /ui/api/endpoints/{id}/jobs/{jobId}/values/{part}`) or downloads it.
 */
import { Buffer } from 'node:buffer';
import { RawJson, type StreamChunk } from 'serverless-worker/internal';

/** Characters of a value's text a job view carries (input, output, the error's long fields). */
export const PREVIEW_CHARS = 16 * 1024;
/** Characters of one chunk's text a job view or a live chunk message carries. */
export const CHUNK_PREVIEW_CHARS = 2 * 1024;
/** The last chunks a job view carries (earlier ones load on demand). */
export const VIEW_CHUNKS = 200;

/**
 * A value as a page sees it: whole (`value`) when its JSON is at most the limit, else
 * `preview` (the beginning of the string, or of the JSON text for anything else).
 * `bytes`: the size of its JSON text, UTF-8.
 */
export type ValuePreview =
  | { readonly complete: true; readonly bytes: number; readonly value: unknown }
  | { readonly complete: false; readonly bytes: number; readonly preview: string };

/**
 * The JSON text of `value` (undefined as null: the page shows it as such). A large input
 * kept as its text (RawJson) is that text, as received: stringifying the wrapper would
 * answer `{"text": "<the JSON as a string>"}` (a rerun then sent that as the input).
 */
export function jsonText(value: unknown): string {
  if (value instanceof RawJson) return value.text;
  return JSON.stringify(value) ?? 'null';
}

export function previewValue(value: unknown, limit = PREVIEW_CHARS): ValuePreview {
  // A string's own length bounds its JSON's from below: a long one is cut without stringifying it all.
  if (typeof value === 'string' && value.length > limit) {
    return { complete: false, bytes: Buffer.byteLength(jsonText(value)), preview: value.slice(0, limit) };
  }
  const text = jsonText(value);
  // A RawJson is not parsed for its preview (it can be megabytes): its text is cut as it is.
  if (text.length <= limit) return { complete: true, bytes: Buffer.byteLength(text), value: value instanceof RawJson ? value.value() : value };
  return { complete: false, bytes: Buffer.byteLength(text), preview: text.slice(0, limit) };
}

/** A chunk as a page sees it: its index in the stream, its output whole or cut (`clipped`: its size). */
export interface ChunkPreview {
  readonly index: number;
  readonly output: unknown;
  readonly clippedBytes?: number;
}

export function previewChunk(index: number, chunk: StreamChunk): ChunkPreview {
  const preview = previewValue(chunk.output, CHUNK_PREVIEW_CHARS);
  return preview.complete ? { index, output: preview.value } : { index, output: preview.preview, clippedBytes: preview.bytes };
}

/**
 * An error payload with every string field cut to the limit (a traceback can be
 * megabytes); `clipped` lists the fields cut. The page loads the whole error on demand.
 */
export function previewError<T extends object>(error: T, limit = PREVIEW_CHARS): { error: T; clipped: string[] } {
  const clipped: string[] = [];
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(error)) {
    if (typeof value === 'string' && value.length > limit) {
      copy[key] = `${value.slice(0, limit)}…`;
      clipped.push(key);
    } else if (typeof value === 'object' && value !== null && jsonText(value).length > limit) {
      copy[key] = `${jsonText(value).slice(0, limit)}…`;
      clipped.push(key);
    } else {
      copy[key] = value;
    }
  }
  return { error: copy as T, clipped };
}
