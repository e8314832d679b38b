/**
 * @module job/json-shape
 * The depth and key count of a JSON text, read from its characters in one pass with no
 * recursion and no allocation: cheap enough to run on a 20 MB body before JSON.parse,
 * and safe on any nesting (a recursive walk of a value 100 000 levels deep overflows
 * the stack; this does not).
 */

export interface JsonShape {
  /** Deepest nesting of arrays and objects (0 for a scalar). */
  readonly depth: number;
  /** Object keys, duplicates included. */
  readonly keys: number;
  /** Where the scan stopped early: the first limit passed, else undefined (the whole text was read). */
  readonly over?: 'depth' | 'keys';
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;

/**
 * Measure `text` (JSON, or something close: malformed text is measured as far as it goes,
 * JSON.parse judges it after). Stops at the first limit passed, with `over` naming it.
 */
export function jsonShape(text: string, limits: { readonly maxDepth: number; readonly maxKeys: number }): JsonShape {
  let depth = 0;
  let deepest = 0;
  let keys = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      // Skip the string: an escaped character (\" included) never ends it.
      for (i++; i < n; i++) {
        const s = text.charCodeAt(i);
        if (s === BACKSLASH) i++;
        else if (s === QUOTE) break;
      }
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      depth++;
      if (depth > deepest) {
        deepest = depth;
        if (deepest > limits.maxDepth) return { depth: deepest, keys, over: 'depth' };
      }
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
    } else if (c === COLON) {
      // In valid JSON a colon outside a string follows exactly one key.
      keys++;
      if (keys > limits.maxKeys) return { depth: deepest, keys, over: 'keys' };
    }
  }
  return { depth: deepest, keys };
}

/**
 * Where the value of `key` lies in a JSON object's text, at its top level: [start, end)
 * (surrounding spaces included; the last one when the key repeats, as JSON.parse keeps
 * it). Undefined when the text is not an object or has no such key written plainly (an
 * escaped spelling of the key is not found: callers fall back to JSON.parse). One pass,
 * no recursion, no allocation.
 */
export function topLevelValueSpan(text: string, key: string): { readonly start: number; readonly end: number } | undefined {
  const quoted = `"${key}"`;
  let depth = 0;
  let keyStart = -1;
  let keyEnd = -1;
  let start = -1;
  let end = -1;
  let inValue = false;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const from = i;
      for (i++; i < n; i++) {
        const s = text.charCodeAt(i);
        if (s === BACKSLASH) i++;
        else if (s === QUOTE) break;
      }
      if (depth === 1) {
        keyStart = from;
        keyEnd = i + 1;
      }
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      depth++;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      if (depth === 1 && inValue) {
        end = i;
        inValue = false;
      }
      depth--;
    } else if (c === COLON) {
      if (depth === 1 && keyEnd - keyStart === quoted.length && text.startsWith(quoted, keyStart)) {
        start = i + 1;
        inValue = true;
      }
    } else if (c === COMMA && depth === 1 && inValue) {
      end = i;
      inValue = false;
    }
  }
  return start >= 0 && end >= start ? { start, end } : undefined;
}
