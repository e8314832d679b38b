/**
 * @module worker/split-string
 * Cuts a string into parts whose JSON-escaped UTF-8 size fits a limit, at code-point
 * boundaries (a surrogate pair is never cut).
 */
import { isHighSurrogate, isLowSurrogate, jsonStringSize } from './json-size.js';

/**
 * Fraction of the estimated fit that a cut aims at: a little under, since measuring a
 * part that turns out too big costs a second measure.
 */
export const CUT_AIM = 0.995;
// After an overshoot, cuts aim further under.
const SHRINK = 0.97;

/**
 * Cuts `s` into parts whose JSON-escaped UTF-8 size (quotes included) is at most `limit`,
 * at code-point boundaries; the parts concatenated give `s`. Linear: each cut is
 * estimated from the bytes-per-unit ratio of the last part, measured once, and shrunk
 * only when over. `limit` must leave room for one escaped unit or pair (MIN_CHUNK_BYTES does).
 */
export function splitString(s: string, limit: number): string[] {
  const parts: string[] = [];
  const budget = limit - 2; // the quotes
  let ratio = 1; // bytes per UTF-16 unit; start from ASCII, learn from each part
  let pos = 0;
  while (pos < s.length) {
    let n = Math.max(1, Math.floor((budget / ratio) * (ratio === 1 ? 1 : CUT_AIM)));
    for (;;) {
      let end = Math.min(s.length, pos + n);
      if (end < s.length && isHighSurrogate(s.charCodeAt(end - 1)) && isLowSurrogate(s.charCodeAt(end))) {
        end = end - 1 > pos ? end - 1 : end + 1; // never cut a pair; a lone pair fits any limit
      }
      const part = s.slice(pos, end);
      const bytes = jsonStringSize(part);
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
