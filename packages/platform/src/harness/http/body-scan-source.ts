/**
 * @module harness/http/body-scan-source
 * The source of `bodyFacts(text, maxDepth, maxKeys)`, the one pass a body check thread makes
 * over a large request body (off-loop-body-check.ts): JSON's grammar (RFC 8259, what
 * JSON.parse accepts) checked character by character, the nesting depth and key count
 * against their limits, and the span of the last top-level `"input"` value.
 *
 * It checks the grammar itself instead of calling JSON.parse because JSON.parse of a body
 * of 834 000 keys builds its property list in C++ memory (tens of MB, grown by doubling):
 * freed in the thread's own malloc arena, that memory stayed with the process after the
 * thread ended, and its size raised glibc's mmap threshold for the whole process, so the
 * main thread's large blocks stayed too (bench/README, issue 49: RSS 30 s after a purge).
 * This scan allocates nothing but a stack as deep as the body. Only a body it finds invalid
 * is handed to JSON.parse, for the message clients know.
 *
 * Plain JavaScript in a string, so that it runs in a thread started from source with
 * `eval: true` (no file to find beside a bundle); the tests compile the same text.
 */

/** What bodyFacts answers: `invalidAt` (the index where the grammar broke) or `over`, or the facts of a valid body. */
export interface ScannedBody {
  readonly invalidAt?: number;
  readonly over?: 'depth' | 'keys';
  readonly depth: number;
  readonly keys: number;
  /** The last top-level "input" value's text: [start, end) in the body (-1 when there is none). */
  readonly inputStart: number;
  readonly inputEnd: number;
}

/**
 * Two self-contained functions: `bodyFacts(text, maxDepth, maxKeys)`, the pass itself (a
 * ScannedBody), and `checkBody(text, maxDepth, maxKeys)`, what a check thread answers (its
 * BodyFacts): JSON.parse runs only on a body the pass found invalid, for its message; should
 * the two ever disagree, JSON.parse decides, and the facts say `guarded` so that the loop
 * parses the body whole.
 */
export const BODY_SCAN_SOURCE = String.raw`
function bodyFacts(text, maxDepth, maxKeys) {
  const n = text.length;
  const containers = []; // true: an object, false: an array
  let i = 0, deepest = 0, keys = 0, inputStart = -1, inputEnd = -1, inInput = false;
  const invalid = () => ({ invalidAt: i, depth: deepest, keys, inputStart: -1, inputEnd: -1 });
  const over = (what) => ({ over: what, depth: deepest, keys, inputStart: -1, inputEnd: -1 });
  const space = () => {
    for (; i < n; i++) { const c = text.charCodeAt(i); if (c !== 32 && c !== 10 && c !== 13 && c !== 9) return; }
  };
  const isHex = (c) => (c >= 48 && c <= 57) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102);
  const digits = () => {
    const start = i;
    for (; i < n; i++) { const c = text.charCodeAt(i); if (c < 48 || c > 57) break; }
    return i > start;
  };
  // A string from the quote at i; i ends after its closing quote. False where the grammar breaks.
  const string = () => {
    for (i++; i < n; ) {
      const c = text.charCodeAt(i);
      if (c === 34) { i++; return true; }
      if (c < 32) return false;
      if (c !== 92) { i++; continue; }
      const e = text.charCodeAt(i + 1);
      if (e === 117) {
        for (let k = 2; k < 6; k++) if (!isHex(text.charCodeAt(i + k))) { i += k; return false; }
        i += 6;
      } else if (e === 34 || e === 92 || e === 47 || e === 98 || e === 102 || e === 110 || e === 114 || e === 116) i += 2;
      else { i++; return false; }
    }
    return false;
  };
  const number = () => {
    if (text.charCodeAt(i) === 45) i++;
    const first = text.charCodeAt(i);
    if (first === 48) i++;
    else if (first < 49 || first > 57 || !digits()) return false;
    if (text.charCodeAt(i) === 46) { i++; if (!digits()) return false; }
    const e = text.charCodeAt(i);
    if (e === 101 || e === 69) {
      i++;
      const sign = text.charCodeAt(i);
      if (sign === 43 || sign === 45) i++;
      if (!digits()) return false;
    }
    return true;
  };
  // A key, its colon and the space after it; 'over' past maxKeys.
  const key = () => {
    if (text.charCodeAt(i) !== 34) return false;
    const start = i;
    if (!string()) return false;
    const isInput = containers.length === 1 && i - start === 7 && text.startsWith('"input"', start);
    keys++;
    if (keys > maxKeys) return 'over';
    space();
    if (text.charCodeAt(i) !== 58) return false;
    i++;
    if (isInput) { inputStart = i; inInput = true; }
    space();
    return true;
  };
  space();
  for (;;) {
    // A value starts at i.
    const c = text.charCodeAt(i);
    if (c === 123 || c === 91) {
      containers.push(c === 123);
      if (containers.length > deepest) { deepest = containers.length; if (deepest > maxDepth) return over('depth'); }
      i++;
      space();
      const close = text.charCodeAt(i);
      if (close === (c === 123 ? 125 : 93)) { i++; containers.pop(); }
      else if (c === 123) {
        const found = key();
        if (found === 'over') return over('keys');
        if (!found) return invalid();
        continue;
      } else continue;
    } else if (c === 34) { if (!string()) return invalid(); }
    else if (c === 116) { if (!text.startsWith('true', i)) return invalid(); i += 4; }
    else if (c === 102) { if (!text.startsWith('false', i)) return invalid(); i += 5; }
    else if (c === 110) { if (!text.startsWith('null', i)) return invalid(); i += 4; }
    else if (c === 45 || (c >= 48 && c <= 57)) { if (!number()) return invalid(); }
    else return invalid();
    // After a value: a comma, the end of its container(s), or the end of the text.
    for (;;) {
      space();
      if (containers.length === 0) return i === n ? { depth: deepest, keys, inputStart, inputEnd } : invalid();
      const inObject = containers[containers.length - 1];
      const next = text.charCodeAt(i);
      if (containers.length === 1 && inInput && (next === 44 || next === 125)) { inputEnd = i; inInput = false; }
      if (next === 44) {
        i++;
        space();
        if (inObject) {
          const found = key();
          if (found === 'over') return over('keys');
          if (!found) return invalid();
        }
        break;
      }
      if (next !== (inObject ? 125 : 93)) return invalid();
      i++;
      containers.pop();
    }
  }
}
function checkBody(text, maxDepth, maxKeys) {
  const found = bodyFacts(text, maxDepth, maxKeys);
  const guarded = text.includes('"__proto__"') || text.includes('"constructor"');
  if (found.invalidAt === undefined) return { ...found, guarded };
  try {
    JSON.parse(text);
    return { depth: found.depth, keys: found.keys, inputStart: -1, inputEnd: -1, guarded: true };
  } catch (error) {
    return { ...found, guarded, syntaxError: typeof error?.message === 'string' ? error.message : String(error) };
  }
}
`;
