/**
 * The large-body check's own JSON pass (body-scan-source.ts) against JSON.parse: the same
 * verdict on hand-picked edge cases and on thousands of generated documents and mutations
 * of them; the top-level input's span; the limits as jsonShape counts them; and JSON.parse
 * left alone for a valid body (its memory was issue 49's RSS after a purge).
 */
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { BODY_SCAN_SOURCE, type ScannedBody } from '../../../packages/platform/src/harness/http/body-scan-source.js';
import { jsonShape } from '../../../src/job/json-shape.js';

type Scan = (text: string, maxDepth: number, maxKeys: number) => ScannedBody;
type Check = (text: string, maxDepth: number, maxKeys: number) => ScannedBody & { guarded: boolean; syntaxError?: string };

function compile(globals: Record<string, unknown> = {}): { bodyFacts: Scan; checkBody: Check } {
  return runInNewContext(`${BODY_SCAN_SOURCE}; ({ bodyFacts, checkBody })`, globals) as { bodyFacts: Scan; checkBody: Check };
}

const { bodyFacts } = compile();
const NO_LIMIT = 1_000_000;
const validForScan = (text: string): boolean => bodyFacts(text, NO_LIMIT, NO_LIMIT).invalidAt === undefined;
const validForParse = (text: string): boolean => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};

/** A small seeded generator (mulberry32): the same documents every run. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SPACES = ['', ' ', '\n', '\t', '\r\n', '  '];
const STRINGS = ['', 'a', 'input', '\\"', '\\\\', '\\/', '\\b\\f\\n\\r\\t', '\\u0041', '\\ud800', 'é€😀', '__proto__', '\\u00e9x'];
const NUMBERS = ['0', '-0', '1', '-12', '3.25', '1e5', '1E-7', '-0.0e+0', '123456789012345678901234567890', '2.5E+10'];

function document(next: () => number, depth = 0): string {
  const pick = <T>(values: readonly T[]): T => values[Math.floor(next() * values.length)] as T;
  const space = () => pick(SPACES);
  const kind = depth > 4 ? Math.floor(next() * 4) : Math.floor(next() * 6);
  if (kind === 0) return `"${pick(STRINGS)}"`;
  if (kind === 1) return pick(NUMBERS);
  if (kind === 2) return pick(['true', 'false', 'null']);
  if (kind === 3) return `"${pick(STRINGS)}${pick(STRINGS)}"`;
  const count = Math.floor(next() * 4);
  const items = Array.from({ length: count }, () =>
    kind === 4 ? `${space()}${document(next, depth + 1)}${space()}` : `${space()}"${pick(STRINGS)}"${space()}:${space()}${document(next, depth + 1)}${space()}`,
  );
  return kind === 4 ? `[${items.join(',')}${count === 0 ? space() : ''}]` : `{${items.join(',')}${count === 0 ? space() : ''}}`;
}

const MUTATION_CHARACTERS = ['{', '}', '[', ']', ',', ':', '"', '\\', '0', '-', '.', 'e', '+', 't', 'n', ' ', '\u0001', '\u001f', '\u007f', '\u00a0', 'x', 'u'];

function mutate(text: string, next: () => number): string {
  const at = Math.floor(next() * (text.length + 1));
  const character = MUTATION_CHARACTERS[Math.floor(next() * MUTATION_CHARACTERS.length)] as string;
  const kind = Math.floor(next() * 4);
  if (kind === 0) return text.slice(0, at) + text.slice(at + 1);
  if (kind === 1) return text.slice(0, at) + character + text.slice(at);
  if (kind === 2) return text.slice(0, at) + character + text.slice(at + 1);
  return text.slice(0, at);
}

describe('the large-body JSON pass', () => {
  it('agrees with JSON.parse on the grammar edge cases', () => {
    // prettier-ignore
    const cases = [
      '{}', '[]', ' {"a" : [1 , 2] } ', '"x"', '0', '-0', '1e5', '1E+5', '0.5e-3', 'true', 'false', 'null', '"\\u00e9"', '"\\ud800"', '[[[]]]', '',
      ' ', '01', '-', '1.', '.5', '1e', '1e+', '+1', '--1', '0x1', '[1,]', '{"a":1,}', '{,}', '[,1]', '"\\x"', '"\\u12G4"', '"\\u12"', '"a\tb"',
      '"a\nb"', '"\u001f"', '"\u0020\u007f"', 'nul', 'truex', 'tru', '[1 2]', '{"a" 1}', '{1:2}', '{"a"}', '{"a":}', '\u00a0 1', '\ufeff{}', '[]]',
      '{}{}', '1 2', '"unterminated', '"\\', '[', '{', '{"a":1', '["a"', 'NaN', 'Infinity', "'a'", '[01]', '[-]', '{"a":1}}', '\u000b1', '1\u000c',
    ];
    for (const text of cases) expect(validForScan(text), JSON.stringify(text)).toBe(validForParse(text));
  });

  it('agrees with JSON.parse on 4 000 generated documents and 16 000 mutations of them', () => {
    const next = random(49);
    let invalid = 0;
    for (let n = 0; n < 4_000; n++) {
      const text = `${SPACES[n % SPACES.length]}${document(next)}${SPACES[(n >> 2) % SPACES.length]}`;
      expect(validForScan(text), text).toBe(true);
      expect(validForParse(text), text).toBe(true);
      for (let m = 0; m < 4; m++) {
        const mutated = mutate(text, next);
        const parsed = validForParse(mutated);
        if (!parsed) invalid++;
        expect(validForScan(mutated), JSON.stringify(mutated)).toBe(parsed);
      }
    }
    // The mutations reach both verdicts: the comparison above is not all one way.
    expect(invalid).toBeGreaterThan(4_000);
  });

  it('finds the last top-level "input" value, wherever it lies, and no nested one', () => {
    const span = (text: string): string | undefined => {
      const { inputStart, inputEnd } = bodyFacts(text, NO_LIMIT, NO_LIMIT);
      return inputStart < 0 ? undefined : text.slice(inputStart, inputEnd).trim();
    };
    expect(span('{"input":{"x":[1,{"input":2}]}}')).toBe('{"x":[1,{"input":2}]}');
    expect(span('{ "policy": {"ttl": 1}, "input" : [1, "a,}"] , "webhook": "w" }')).toBe('[1, "a,}"]');
    expect(span('{"input":1,"input":"second"}')).toBe('"second"');
    expect(span('{"inputs":1,"x":{"input":2}}')).toBeUndefined();
    expect(span('["input",{"input":1}]')).toBeUndefined();
    expect(span('{"input":{"a":1}')).toBeUndefined();
  });

  it('stops at the first limit passed, as jsonShape counts depth and keys', () => {
    const next = random(7);
    for (let n = 0; n < 2_000; n++) {
      const text = document(next);
      const limits = { maxDepth: Math.floor(next() * 4), maxKeys: Math.floor(next() * 6) };
      const scanned = bodyFacts(text, limits.maxDepth, limits.maxKeys);
      const shape = jsonShape(text, limits);
      expect(scanned.over, text).toBe(shape.over);
      if (shape.over === undefined) expect([scanned.depth, scanned.keys], text).toEqual([shape.depth, shape.keys]);
    }
  });

  it('leaves JSON.parse alone for a valid body, and takes its message for an invalid one', () => {
    let parses = 0;
    const countingJson = {
      parse: (text: string) => {
        parses++;
        return JSON.parse(text) as unknown;
      },
    };
    const { checkBody } = compile({ JSON: countingJson });
    const big = `{"input":{${Array.from({ length: 20_000 }, (_, i) => `"k${i}":${i}`).join(',')}}}`;
    expect(checkBody(big, 33, 1_000_000)).toMatchObject({ guarded: false, inputStart: 9, inputEnd: big.length - 1 });
    expect(parses).toBe(0);
    const broken = checkBody(big.slice(0, -1), 33, 1_000_000);
    expect(parses).toBe(1);
    expect(broken.syntaxError).toBe(
      ((): string => {
        try {
          JSON.parse(big.slice(0, -1));
          return '';
        } catch (error) {
          return (error as Error).message;
        }
      })(),
    );
  });
});
