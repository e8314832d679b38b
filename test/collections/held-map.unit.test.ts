/**
 * HeldMap (src/collections/held-map.ts), a Map whose values sit in boxes a delete empties:
 * it answers as a Map does (get, has, set over a key, delete, size, insertion order in every
 * iteration, clear), and a deleted or cleared value is no longer reachable through it
 * (WeakRef and a full collection, V8's flag for this test).
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { HeldMap } from '../../src/collections/held-map.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** Set and delete `count` values (in a function of its own: a suspended async test keeps its last locals); answers WeakRefs to them. */
function setAndDelete(map: HeldMap<string, object>, count: number): Array<WeakRef<object>> {
  const refs: Array<WeakRef<object>> = [];
  for (let i = 0; i < count; i++) {
    const value = { run: i };
    refs.push(new WeakRef(value));
    map.set(`k${i}`, value);
    expect(map.delete(`k${i}`)).toBe(true);
  }
  return refs;
}

describe('HeldMap', () => {
  it('answers as a Map: get, has, size, a set over a key, delete, and insertion order', () => {
    const map = new HeldMap<string, number>();
    const plain = new Map<string, number>();
    for (const [key, value] of [
      ['a', 1],
      ['b', 2],
      ['c', 3],
      ['a', 4],
    ] as const) {
      expect(map.set(key, value)).toBe(map);
      plain.set(key, value);
    }
    expect(map.delete('b')).toBe(true);
    plain.delete('b');
    expect(map.delete('b')).toBe(false);
    expect(map.size).toBe(2);
    expect(map.get('a')).toBe(4);
    expect(map.get('b')).toBeUndefined();
    expect(map.has('c')).toBe(true);
    expect(map.has('b')).toBe(false);
    expect([...map]).toEqual([...plain]);
    expect([...map.entries()]).toEqual([...plain.entries()]);
    expect([...map.keys()]).toEqual([...plain.keys()]);
    expect([...map.values()]).toEqual([...plain.values()]);
    const seen: Array<[string, number]> = [];
    map.forEach((value, key, self) => {
      expect(self).toBe(map);
      seen.push([key, value]);
    });
    expect(seen).toEqual([...plain]);
    map.clear();
    expect(map.size).toBe(0);
    expect([...map]).toEqual([]);
  });

  it('keeps an undefined value apart from a missing key, as a Map does', () => {
    const map = new HeldMap<string, number | undefined>();
    map.set('there', undefined);
    expect(map.has('there')).toBe(true);
    expect(map.size).toBe(1);
    expect([...map.values()]).toEqual([undefined]);
  });

  it('lets go of deleted and cleared values at once', async () => {
    const map = new HeldMap<string, object>();
    const refs = setAndDelete(map, 1_000);
    const cleared = (() => {
      const value = { run: 'cleared' };
      map.set('cleared', value);
      return new WeakRef(value);
    })();
    map.clear();
    await new Promise((resolve) => setImmediate(resolve));
    gc();
    await new Promise((resolve) => setImmediate(resolve));
    expect(refs.filter((ref) => ref.deref() !== undefined)).toHaveLength(0);
    expect(cleared.deref()).toBeUndefined();
  });
});
