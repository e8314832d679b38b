/**
 * The coalescer of the PostgreSQL store's submissions (store/postgres/coalescer.ts):
 * calls made together go in one statement, in order, within its limits; one call's
 * failure is its own; a statement that committed is never run again.
 */
import { expect, it } from 'vitest';
import { Coalescer } from '../../../packages/platform/src/harness/store/postgres/coalescer.js';

/** A statement that records each batch it is given and answers each item doubled, after a turn of the loop. */
function recorder(fail: (items: readonly number[]) => boolean = () => false): { batches: number[][]; run: (items: readonly number[]) => Promise<number[]> } {
  const batches: number[][] = [];
  return {
    batches,
    run: async (items) => {
      batches.push([...items]);
      await new Promise((resolve) => setImmediate(resolve));
      if (fail(items)) throw new Error(`refused ${items.join(',')}`);
      return items.map((item) => item * 2);
    },
  };
}

it('joins the calls of one turn, and those made while a statement is in flight, in order, each answered with its own output', async () => {
  const statement = recorder();
  const coalescer = new Coalescer(statement.run, { maxItems: 100, maxSize: 1_000 });
  const firstTurn = [1, 2, 3].map((item) => coalescer.add(item, 1));
  // Made once the first statement is in flight (it answers a turn later).
  await new Promise((resolve) => setImmediate(resolve));
  expect(statement.batches).toEqual([[1, 2, 3]]);
  const meanwhile = [4, 5].map((item) => coalescer.add(item, 1));
  expect(await Promise.all([...firstTurn, ...meanwhile])).toEqual([2, 4, 6, 8, 10]);
  expect(statement.batches).toEqual([
    [1, 2, 3],
    [4, 5],
  ]);
  // Idle again: the next call goes alone.
  expect(await coalescer.add(6, 1)).toBe(12);
  expect(statement.batches.at(-1)).toEqual([6]);
});

it('keeps each statement within its count and size, a single larger call going alone', async () => {
  const statement = recorder();
  const coalescer = new Coalescer(statement.run, { maxItems: 3, maxSize: 10 });
  const calls = [
    [1, 1],
    [2, 1],
    [3, 1],
    [4, 1],
    [5, 1], // count: at most 3 together
    [6, 8],
    [7, 8], // size: 8 + 8 > 10
    [8, 50], // larger than maxSize: alone
    [9, 1],
  ] as const;
  const outputs = await Promise.all(calls.map(([item, size]) => coalescer.add(item, size)));
  expect(outputs).toEqual(calls.map(([item]) => item * 2));
  expect(statement.batches).toEqual([[1, 2, 3], [4, 5, 6], [7], [8], [9]]);
});

it('runs a failed joint statement again one call at a time: only the bad call fails', async () => {
  const statement = recorder((items) => items.includes(3));
  const coalescer = new Coalescer(statement.run, { maxItems: 100, maxSize: 1_000 });
  const settled = await Promise.allSettled([1, 2, 3, 4].map((item) => coalescer.add(item, 1)));
  expect(settled.map((result) => (result.status === 'fulfilled' ? result.value : (result.reason as Error).message))).toEqual([2, 4, 'refused 3', 8]);
  expect(statement.batches).toEqual([[1, 2, 3, 4], [1], [2], [3], [4]]);
});

it('never runs again a statement that committed but answered the wrong number of rows: every call of it fails', async () => {
  const batches: number[][] = [];
  const coalescer = new Coalescer<number, number>(
    async (items) => {
      batches.push([...items]);
      await new Promise((resolve) => setImmediate(resolve));
      return items.length > 1 ? [1] : [items[0] ?? 0];
    },
    { maxItems: 100, maxSize: 1_000 },
  );
  const settled = await Promise.allSettled([1, 2, 3].map((item) => coalescer.add(item, 1)));
  expect(settled.map((result) => result.status)).toEqual(['rejected', 'rejected', 'rejected']);
  expect(String((settled[1] as PromiseRejectedResult).reason)).toContain('answered 1 rows for 3 calls');
  expect(batches).toEqual([[1, 2, 3]]);
});

/** A coalescer of two statements in flight whose statements each wait until the test answers them (`answers`, in the order they began). */
function heldStatements<T, O>(answer: (item: T) => O): { batches: T[][]; answers: Array<() => void>; coalescer: Coalescer<T, O> } {
  const batches: T[][] = [];
  const answers: Array<() => void> = [];
  const coalescer = new Coalescer(
    async (items: readonly T[]) => {
      batches.push([...items]);
      await new Promise<void>((resolve) => answers.push(resolve));
      return items.map(answer);
    },
    { maxItems: 100, maxSize: 1_000, inFlight: 2 },
  );
  return { batches, answers, coalescer };
}

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
/** Two turns: the one in which a statement's answer came, and the one after which its loop takes the next calls. */
const answered = async (): Promise<void> => {
  await turn();
  await turn();
};

it('after an answer, waits for the end of its turn: the calls its callers make in answer to it go together in the next statement', async () => {
  const { batches, answers, coalescer } = heldStatements((item: number) => item * 2);
  const first = [1, 2].map((item) => coalescer.add(item, 1));
  await turn();
  // Both in flight (a second statement would run beside the first): each caller, once answered, makes its next call
  // after a few steps of its own (the microtasks of a chain of awaits). They go in one statement, not one by one.
  const second = [coalescer.add(3, 1)];
  await turn();
  expect(batches).toEqual([[1, 2], [3]]);
  const next = first.map(async (answer, index) => {
    await answer;
    for (let step = 0; step < index * 3; step++) await Promise.resolve();
    return coalescer.add(10 + index, 1);
  });
  answers[0]?.();
  await answered();
  expect(batches).toEqual([[1, 2], [3], [10, 11]]);
  answers[1]?.();
  answers[2]?.();
  expect(await Promise.all([...first, ...second, ...next])).toEqual([2, 4, 6, 20, 22]);
});

it('with inFlight 2, runs the calls made while a statement is in flight in a second one at once, and no third', async () => {
  const { batches, answers, coalescer } = heldStatements((item: number) => item * 2);
  const first = coalescer.add(1, 1);
  await turn();
  expect(batches).toEqual([[1]]);
  // The first in flight: these go together in a second statement at once.
  const second = [2, 3].map((item) => coalescer.add(item, 1));
  await turn();
  expect(batches).toEqual([[1], [2, 3]]);
  // Made in two turns while both are in flight: no third statement; they go together once one of them is answered.
  const third = coalescer.add(4, 1);
  await turn();
  const fourth = coalescer.add(5, 1);
  await turn();
  expect(batches).toEqual([[1], [2, 3]]);
  answers[1]?.();
  expect(await Promise.all(second)).toEqual([4, 6]);
  await turn();
  expect(batches).toEqual([[1], [2, 3], [4, 5]]);
  answers[0]?.();
  answers[2]?.();
  expect(await Promise.all([first, third, fourth])).toEqual([2, 8, 10]);
});

it('with inFlight 2, never runs calls of one key in two statements at once: a call whose key is in flight waits for that answer, in order', async () => {
  const { batches, answers, coalescer } = heldStatements((item: string) => `${item}!`);
  // Two calls of job a in one turn share a statement (the statement decides between them).
  const first = [coalescer.add('a1', 1, 'a'), coalescer.add('a2', 1, 'a')];
  await turn();
  expect(batches).toEqual([['a1', 'a2']]);
  // While a is in flight: b's call and a call with no key go in a second statement at once; a's next call waits.
  const second = [coalescer.add('a3', 1, 'a'), coalescer.add('b1', 1, 'b'), coalescer.add('c1', 1)];
  await turn();
  expect(batches).toEqual([
    ['a1', 'a2'],
    ['b1', 'c1'],
  ]);
  // Both in flight: no third statement.
  const third = [coalescer.add('b2', 1, 'b'), coalescer.add('d1', 1, 'd')];
  await turn();
  expect(batches).toHaveLength(2);
  // b answered: once that turn is over, its loop takes what it may (b's next call, and d), passing over a's call still in flight.
  answers[1]?.();
  await answered();
  expect(batches.at(-1)).toEqual(['b2', 'd1']);
  // a answered: a3 runs now, after a1 and a2.
  answers[0]?.();
  await answered();
  expect(batches.at(-1)).toEqual(['a3']);
  answers[2]?.();
  answers[3]?.();
  expect(await Promise.all([...first, ...second, ...third])).toEqual(['a1!', 'a2!', 'a3!', 'b1!', 'c1!', 'b2!', 'd1!']);
  expect(batches).toHaveLength(4);
});
