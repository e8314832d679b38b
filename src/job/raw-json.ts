/**
 * @module job/raw-json
 * A job's input kept as the JSON text it arrived as. A large /run body is not parsed
 * on the harness's event loop, nor copied into a frozen object tree (a 9.9 MB body of
 * 834 000 keys held 50 MB of heap that way and blocked the loop for seconds): its input
 * is queued as its text, a fifth of the heap, and parsed when a worker takes it.
 * Anything that reads a stored request's input calls {@link inputValue}.
 */
import { topLevelValueSpan } from './json-shape.js';

/** JSON text (already checked to parse) standing for the value it parses to. */
export class RawJson {
  readonly text: string;

  constructor(text: string) {
    this.text = text;
    Object.freeze(this);
  }

  /** The value: a new parse on each call. */
  value(): unknown {
    return JSON.parse(this.text) as unknown;
  }
}

/** A request's input as a value: parsed when it is kept as text, else as it is. */
export function inputValue<T>(input: T | RawJson): T {
  return input instanceof RawJson ? (input.value() as T) : input;
}

/** `request` (a job request, a job as a worker gets it) as JSON text, a raw input spliced in as received (no parse, no stringify of it). */
export function requestJsonText<T extends { readonly input?: unknown }>(request: T): string {
  const { input } = request;
  if (!(input instanceof RawJson)) return JSON.stringify(request);
  const rest = JSON.stringify({ ...request, input: 0 });
  // `rest` starts with {"input":0 (input is the first key of every request we build); else rebuild.
  const head = '{"input":0';
  if (rest.startsWith(head)) return `{"input":${input.text}${rest.slice(head.length)}`;
  const { input: _drop, ...others } = request;
  const tail = JSON.stringify(others);
  return tail === '{}' ? `{"input":${input.text}}` : `{"input":${input.text},${tail.slice(1)}`;
}

/** Request texts shorter than this are parsed whole: JSON.parse of them costs under a few ms. */
const RAW_REQUEST_MIN_CHARS = 64 * 1024;

/**
 * A stored request's JSON text (as a store keeps it) as a request object, its input left
 * as text (RawJson) when the request is large: the envelope around the input is parsed,
 * the input is not. An escaped "input" key or text that is not an object: parsed whole.
 */
export function requestFromText(text: string): Record<string, unknown> {
  if (text.length < RAW_REQUEST_MIN_CHARS) return JSON.parse(text) as Record<string, unknown>;
  const span = topLevelValueSpan(text, 'input');
  if (span !== undefined) {
    const envelope: unknown = JSON.parse(`${text.slice(0, span.start)}0${text.slice(span.end)}`);
    if (typeof envelope === 'object' && envelope !== null && (envelope as { input?: unknown }).input === 0) {
      return { ...(envelope as Record<string, unknown>), input: new RawJson(text.slice(span.start, span.end).trim()) };
    }
  }
  return JSON.parse(text) as Record<string, unknown>;
}
