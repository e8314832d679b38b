/**
 * HeldList (src/collections/held-list.ts), the linked list that stands in for a Set where
 * an entry comes and goes once a request: order kept, a handle that removes its own entry
 * once (twice is nothing, and never another entry of the same value), values() a copy that
 * a call may change the list under, clear() answering what it held, and a removed value no
 * longer reachable through the list (WeakRef and a full collection, V8's flag for this test).
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { HeldList } from '../../src/collections/held-list.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** Add and remove `count` values (in a function of its own: a suspended async test keeps its last locals); answers WeakRefs to them. */
function addAndRemove(list: HeldList<object>, count: number): Array<WeakRef<object>> {
  const refs: Array<WeakRef<object>> = [];
  for (let i = 0; i < count; i++) {
    const value = { request: i };
    refs.push(new WeakRef(value));
    list.add(value)();
  }
  return refs;
}

describe('HeldList', () => {
  it('keeps values in the order added and removes each through its own handle', () => {
    const list = new HeldList<string>();
    const removeA = list.add('a');
    const removeB = list.add('b');
    const removeC = list.add('c');
    expect(list.values()).toEqual(['a', 'b', 'c']);
    expect(list.size).toBe(3);
    removeB();
    expect(list.values()).toEqual(['a', 'c']);
    removeA();
    expect(list.values()).toEqual(['c']);
    list.add('d');
    removeC();
    expect(list.values()).toEqual(['d']);
    expect(list.size).toBe(1);
  });

  it('does nothing when a handle is called again, and leaves other entries of the same value', () => {
    const list = new HeldList<string>();
    const first = list.add('same');
    list.add('same');
    first();
    first();
    expect(list.values()).toEqual(['same']);
    expect(list.size).toBe(1);
  });

  it('answers a copy from values(): a call that removes or adds meanwhile changes the list, not the walk', () => {
    const list = new HeldList<() => void>();
    const calls: string[] = [];
    let removeSecond: () => void = () => {};
    list.add(() => {
      calls.push('first');
      removeSecond();
      list.add(() => calls.push('late'));
    });
    removeSecond = list.add(() => calls.push('second'));
    for (const call of list.values()) call();
    expect(calls).toEqual(['first', 'second']);
    expect(list.size).toBe(2);
  });

  it('clear() answers every value, first added first, and leaves the list empty with old handles inert', () => {
    const list = new HeldList<number>();
    const removeOne = list.add(1);
    list.add(2);
    list.add(3);
    expect(list.clear()).toEqual([1, 2, 3]);
    expect(list.size).toBe(0);
    expect(list.values()).toEqual([]);
    removeOne();
    expect(list.size).toBe(0);
    list.add(4);
    expect(list.values()).toEqual([4]);
  });

  it('lets go of a removed value at once (the list itself still reachable)', async () => {
    const list = new HeldList<object>();
    let kept: object | undefined = { request: 'kept' };
    const keep = list.add(kept);
    const refs = addAndRemove(list, 1_000);
    const keptRef = new WeakRef(kept);
    kept = undefined;
    await new Promise((resolve) => setImmediate(resolve));
    gc();
    await new Promise((resolve) => setImmediate(resolve));
    expect(refs.filter((ref) => ref.deref() !== undefined)).toHaveLength(0);
    expect(keptRef.deref()).toEqual({ request: 'kept' });
    keep();
    expect(list.size).toBe(0);
  });
});
