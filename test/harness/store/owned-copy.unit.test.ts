/**
 * The memory store's copy of a value it keeps (owned(), memory-records.ts): plain data is
 * copied and frozen in one pass (issue 34, CPU per job); anything else goes to
 * structuredClone as before. Either way the copy is deep, frozen, and shares nothing
 * the caller can change.
 */
import { describe, expect, it } from 'vitest';
import { owned } from '../../../src/harness/store/memory-records.js';

const deeplyFrozen = (value: unknown): boolean =>
  value === null || typeof value !== 'object' || (Object.isFrozen(value) && Object.values(value).every(deeplyFrozen));

describe('owned()', () => {
  it('copies plain data deep and frozen, the same value, sharing nothing', () => {
    const value = { a: 1, s: 'x', n: null, u: undefined, list: [1, { b: [true, 'y'] }], nested: { c: { d: 2 } }, empty: {}, none: [] };
    const copy = owned(value);
    expect(copy).toEqual(value);
    expect(Object.keys(copy)).toEqual(Object.keys(value));
    expect(copy).not.toBe(value);
    expect(copy.list[1]).not.toBe(value.list[1]);
    expect(deeplyFrozen(copy)).toBe(true);
    // The caller's value is left as it was, writable.
    expect(Object.isFrozen(value)).toBe(false);
    value.nested.c.d = 3;
    expect(copy.nested.c.d).toBe(2);
    expect(owned('text')).toBe('text');
    expect(owned(undefined)).toBe(undefined);
  });

  it('leaves to structuredClone what is not plain data: a Date, a cycle, a __proto__ key, deep nesting', () => {
    const date = owned({ at: new Date(5) });
    expect(date.at).toBeInstanceOf(Date);
    expect(date.at.getTime()).toBe(5);
    const cycle: Record<string, unknown> = { name: 'loop' };
    cycle.self = cycle;
    const copied = owned(cycle);
    expect(copied.self).toBe(copied);
    expect(Object.isFrozen(copied)).toBe(true);
    const parsed = JSON.parse('{"__proto__": {"polluted": true}, "ok": 1}') as Record<string, unknown>;
    const safe = owned(parsed);
    expect(Object.getPrototypeOf(safe)).toBe(Object.prototype);
    expect(Object.keys(safe)).toEqual(['__proto__', 'ok']);
    let deep: unknown = 'bottom';
    for (let i = 0; i < 100; i++) deep = [deep];
    expect(owned(deep)).toEqual(deep);
    expect(() => owned({ f: () => 1 })).toThrow();
  });
});
