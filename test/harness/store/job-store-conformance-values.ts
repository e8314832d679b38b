/**
 * The conformance suite's part on values (job-store-conformance.ts registers it): every
 * store keeps whatever JSON allows, byte for byte: the escape \u0000, lone surrogates,
 * astral characters, values nested as deep as the harness accepts (MAX_JSON_DEPTH), in
 * a job's input, output, progress, stream chunks and error. And a result the store
 * cannot keep changes nothing: the job stays as it was, never COMPLETED without its output.
 */
import { describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH, RawJson, inputValue, parseJobRequest, requestJsonText } from '../../../src/job/index.js';
import { T0, failure, type OpenedStore } from './job-store-conformance.js';
import type {} from '../../kit/index.js';

/** An array nested `depth` levels deep (the outermost counts), holding `leaf`. */
export function nested(depth: number, leaf: unknown = 'bottom'): unknown {
  let value: unknown = leaf;
  for (let i = 0; i < depth; i++) value = i % 2 === 0 ? [value] : { d: value };
  return value;
}

/** Strings JSON allows that PostgreSQL's jsonb refuses or a careless copy mangles. */
export const ODD_TEXT = {
  nul: 'a\u0000b',
  onlyNul: '\u0000',
  loneHigh: 'x\ud800y',
  loneLow: '\udc00',
  reversedPair: '\udc00\ud800',
  emoji: 'face \u{1f600} ok',
  controls: '\u0001\u001f\u007f\t\n',
  escapes: '"\\/',
} as const;

export function describeStoreValues(fixture: { current(): Promise<OpenedStore> }): void {
  describe('values: all JSON, byte for byte', () => {
    it('keeps NUL, lone surrogates and deep values in input, progress, chunks, output and error', async () => {
      const { store } = await fixture.current();
      // The deepest input a body may carry: MAX_JSON_DEPTH levels under "input".
      const input = { ...ODD_TEXT, [ODD_TEXT.nul]: ODD_TEXT.loneHigh, deep: nested(MAX_JSON_DEPTH - 1) };
      const body = parseJobRequest({ input });
      const submitted = await store.submit('ep', body, {}, T0);
      expect(JSON.stringify(submitted.request.input)).toBe(JSON.stringify(input));
      const [taken] = await store.take('ep', 'w1', 1, T0 + 1);
      expect(JSON.stringify(taken?.input)).toBe(JSON.stringify(input));
      expect((await store.progress('ep', submitted.id, 'w1', { at: ODD_TEXT.loneLow }, 1, T0 + 2)).applied).toBe(true);
      expect(JSON.stringify((await store.get('ep', submitted.id))?.output)).toBe(JSON.stringify({ at: ODD_TEXT.loneLow }));
      const chunk = { output: ODD_TEXT.nul + ODD_TEXT.reversedPair, metrics: { stream_index: 0 } };
      expect((await store.pushChunk('ep', submitted.id, 'w1', chunk, 1, T0 + 3)).applied).toBe(true);
      const read = await store.readStream('ep', submitted.id);
      expect(read.stream.map((c) => c.output)).toEqual([chunk.output]);
      const output = { text: ODD_TEXT, deep: nested(MAX_JSON_DEPTH) };
      const done = await store.complete('ep', submitted.id, 'w1', { kind: 'output', output }, 1, T0 + 4);
      expect(done.ack).toEqual({ applied: true, status: 'COMPLETED' });
      expect(JSON.stringify((await store.get('ep', submitted.id))?.output)).toBe(JSON.stringify(output));

      const other = await store.submit('ep', parseJobRequest({ input: { [ODD_TEXT.onlyNul]: ODD_TEXT.onlyNul } }), {}, T0 + 5);
      await store.take('ep', 'w1', 1, T0 + 6);
      const error = { ...failure, error_message: `broke on ${ODD_TEXT.nul} and ${ODD_TEXT.loneHigh}` };
      expect((await store.complete('ep', other.id, 'w1', { kind: 'error', error }, 1, T0 + 7)).ack).toEqual({ applied: true, status: 'FAILED' });
      const failed = await store.get('ep', other.id);
      expect(failed?.error).toEqual(error);
      expect(failed?.request.input).toEqual({ [ODD_TEXT.onlyNul]: ODD_TEXT.onlyNul });
    });

    it('keeps an input given as its text (RawJson) as that text, small or large, and hands it to a taker as such', async () => {
      const { store } = await fixture.current();
      const pad = JSON.stringify(Object.fromEntries(Array.from({ length: 12_000 }, (_, i) => [`k${i}`, i])));
      for (const text of ['{"n":2.50,"s":"a\\u0000b\\ud800"}', `{"n":2.50,"s":"a\\u0000b\\ud800","pad":${pad}}`]) {
        const input = new RawJson(text);
        const job = await store.submit('ep', { input: input as unknown as Record<string, unknown>, policy: { ttl: 60_000 } }, {}, T0);
        const [taken] = await store.take('ep', 'w1', 1, T0 + 1);
        // As text or as its value, the same JSON: a large one stays text (the worker API sends it on as it is).
        const given = taken?.input;
        if (text.length > 64 * 1024) expect(given).toBeInstanceOf(RawJson);
        expect(requestJsonText({ input: given })).toBe(given instanceof RawJson ? `{"input":${text}}` : JSON.stringify({ input: JSON.parse(text) }));
        expect(inputValue((await store.get('ep', job.id))?.request.input)).toEqual(JSON.parse(text));
        expect(taken?.policy).toEqual({ ttl: 60_000 });
      }
    });

    it('finds jobs by text in input and output whatever JSON they hold (NUL in keys and values, lone surrogates, an input kept as text)', async () => {
      const { store } = await fixture.current();
      const odd = await store.submit('ep', parseJobRequest({ input: { [ODD_TEXT.nul]: `needle ${ODD_TEXT.nul} ${ODD_TEXT.loneHigh}` } }), {}, T0);
      const raw = await store.submit('ep', { input: new RawJson('{"s":"a\\u0000 haystack"}') as unknown as Record<string, unknown> }, {}, T0 + 1);
      const done = await store.submit('ep', parseJobRequest({ input: { plain: true } }), {}, T0 + 2);
      await store.take('ep', 'w1', 3, T0 + 3);
      await store.complete('ep', done.id, 'w1', { kind: 'output', output: { [ODD_TEXT.nul]: `found ${ODD_TEXT.nul} output` } }, 1, T0 + 4);
      const ids = async (text: string) => (await store.list('ep', { offset: 0, limit: 10, text })).jobs.map((job) => job.id);
      expect(await ids('needle')).toEqual([odd.id]);
      expect(await ids('haystack')).toEqual([raw.id]);
      expect(await ids('output')).toEqual([done.id]);
      expect(await ids('nowhere')).toEqual([]);
      // The other filters read the same rows (an error and a result with NUL in them).
      await store.complete(
        'ep',
        odd.id,
        'w1',
        { kind: 'error', error: { ...failure, worker_id: 'w1', error_code: 'SW_ODD', error_message: `broke on ${ODD_TEXT.nul}` } },
        1,
        T0 + 5,
      );
      expect((await store.list('ep', { offset: 0, limit: 10, errorCode: 'SW_ODD' })).jobs.map((job) => job.id)).toEqual([odd.id]);
      expect((await store.list('ep', { offset: 0, limit: 10, workerId: 'w1', order: 'oldest' })).jobs.map((job) => job.id)).toEqual([odd.id, raw.id, done.id]);
    });

    it('changes nothing when a result cannot be stored: the job stays IN_PROGRESS and a later result lands', async () => {
      const { store } = await fixture.current();
      const job = await store.submit('ep', parseJobRequest({ input: {} }), {}, T0);
      await store.take('ep', 'w1', 1, T0 + 1);
      // A getter that throws: no store can copy or serialize it.
      const unstorable = {
        get boom(): never {
          throw new Error('not data');
        },
      };
      await expect(store.complete('ep', job.id, 'w1', { kind: 'output', output: unstorable }, 1, T0 + 2)).rejects.toThrow();
      const after = await store.get('ep', job.id);
      expect(after).toMatchObject({ status: 'IN_PROGRESS', workerId: 'w1' });
      expect(after).not.toHaveProperty('output');
      expect((await store.health('ep')).jobs).toMatchObject({ completed: 0, inProgress: 1 });
      const done = await store.complete('ep', job.id, 'w1', { kind: 'output', output: { ok: true } }, 1, T0 + 3);
      expect(done.ack).toEqual({ applied: true, status: 'COMPLETED' });
      expect((await store.get('ep', job.id))?.output).toEqual({ ok: true });
    });
  });
}
