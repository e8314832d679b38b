/**
 * The one-pass depth and key count of JSON text (job/json-shape.ts), and a request's
 * JSON text with a raw input spliced in (job/raw-json.ts).
 */
import { describe, expect, it } from 'vitest';
import { RawJson, inputValue, jsonShape, requestJsonText } from '../../src/job/index.js';

const NO_LIMIT = { maxDepth: Number.POSITIVE_INFINITY, maxKeys: Number.POSITIVE_INFINITY };

describe('jsonShape', () => {
  it('counts depth and keys as JSON.parse would see them; text in strings does not count', () => {
    expect(jsonShape('0', NO_LIMIT)).toEqual({ depth: 0, keys: 0 });
    expect(jsonShape('{"a":[1,{"b":2}],"c":{}}', NO_LIMIT)).toEqual({ depth: 3, keys: 3 });
    expect(jsonShape('{"a\\":[{":"[[[{{:::","\\\\":1}', NO_LIMIT)).toEqual({ depth: 1, keys: 2 });
    expect(jsonShape('["\\u005b", "]", "\\\\"]', NO_LIMIT)).toEqual({ depth: 1, keys: 0 });
  });

  it('stops at the first limit passed and names it, on any nesting without a stack', () => {
    const deep = `${'['.repeat(1_000_000)}${']'.repeat(1_000_000)}`;
    expect(jsonShape(deep, { maxDepth: 1_000, maxKeys: 10 })).toEqual({ depth: 1_001, keys: 0, over: 'depth' });
    expect(jsonShape('{"a":1,"a":2,"a":3}', { maxDepth: 10, maxKeys: 2 })).toEqual({ depth: 1, keys: 3, over: 'keys' });
    expect(jsonShape(`[${'['.repeat(1_000)}${']'.repeat(1_000)}]`, { maxDepth: 1_001, maxKeys: 0 })).toEqual({ depth: 1_001, keys: 0 });
  });
});

describe('RawJson and requestJsonText', () => {
  it('splices the input text as received, keeps the other fields, and parses only when asked', () => {
    const input = new RawJson('{"n":2.50,"s":"\\u0000"}');
    expect(requestJsonText({ input, policy: { ttl: 60_000 } })).toBe('{"input":{"n":2.50,"s":"\\u0000"},"policy":{"ttl":60000}}');
    expect(requestJsonText({ id: 'j1', input, attempt: 1 })).toBe('{"input":{"n":2.50,"s":"\\u0000"},"id":"j1","attempt":1}');
    expect(requestJsonText({ input })).toBe('{"input":{"n":2.50,"s":"\\u0000"}}');
    expect(requestJsonText({ id: 'j2', input: { n: 1 } })).toBe('{"id":"j2","input":{"n":1}}');
    expect(inputValue(input)).toEqual({ n: 2.5, s: '\u0000' });
    expect(inputValue({ n: 1 })).toEqual({ n: 1 });
    expect(Object.isFrozen(input)).toBe(true);
  });
});
