/**
 * @module test/worker/stream-chunker
 * Splitting yielded values into stream chunks of at most maxChunkBytes and joining
 * them back: strings (multi-byte, emoji at the boundary, control characters), bytes,
 * arrays, objects, handler metrics, serialization errors, and a property test.
 */
import { Buffer } from 'node:buffer';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isServerlessWorkerError } from '../../src/job/errors.js';
import type { StreamChunk } from '../../src/job/job.js';
import { MAX_CHUNK_BYTES } from '../../src/job/limits.js';
import { joinChunks, splitYield } from '../../src/worker/stream-chunker.js';
import { withMetrics } from '../../src/worker/stream-metrics.js';

// A part that starts with a low surrogate or ends with a high one cut a pair in two.
const CUT_PAIR = /^[\udc00-\udfff]|[\ud800-\udbff]$/;

const size = (chunk: StreamChunk): number => Buffer.byteLength(JSON.stringify(chunk.output));

/** Splits every value with a running stream_index, as the runtime does across yields. */
function stream(values: readonly unknown[], maxChunkBytes?: number): StreamChunk[] {
  const chunks: StreamChunk[] = [];
  for (const value of values) chunks.push(...splitYield(value, chunks.length, maxChunkBytes === undefined ? undefined : { maxChunkBytes }));
  return chunks;
}

/** The checks every stream must pass: each chunk fits, indices run 0, 1, 2, ... */
function expectWellFormed(chunks: readonly StreamChunk[], limit: number): void {
  chunks.forEach((chunk, i) => {
    expect(size(chunk)).toBeLessThanOrEqual(limit);
    expect(chunk.metrics?.stream_index).toBe(i);
  });
}

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

describe('splitYield: strings', () => {
  it('sends a small string as one chunk with only stream_index', () => {
    expect(splitYield('token', 7)).toEqual([{ output: 'token', metrics: { stream_index: 7 } }]);
  });

  it('splits multi-byte text at code-point boundaries and joins it back', () => {
    const text = 'héllo wörld € 漢字 '.repeat(40);
    const chunks = splitYield(text, 0, { maxChunkBytes: 40 });
    expect(chunks.length).toBeGreaterThan(1);
    expectWellFormed(chunks, 40);
    expect(chunks.map((c) => c.output).join('')).toBe(text);
    expect(joinChunks(chunks)).toEqual([text]);
  });

  it('never cuts an emoji, wherever the boundary falls', () => {
    const limit = 32; // room for 30 bytes of text between the quotes
    for (let lead = 0; lead <= 40; lead++) {
      const text = `${'a'.repeat(lead)}😀${'é'.repeat(lead % 5)}🎉b`;
      const chunks = splitYield(text, 0, { maxChunkBytes: limit });
      expectWellFormed(chunks, limit);
      for (const chunk of chunks) expect(chunk.output).not.toMatch(CUT_PAIR);
      expect(joinChunks(chunks)).toEqual([text]);
    }
  });

  it('keeps an emoji whole exactly at the default 1 MiB boundary', () => {
    // 'a' x (1 MiB - 3) and the quotes leave 1 byte: the emoji's 4 bytes must move whole to the next part.
    const text = `${'a'.repeat(MAX_CHUNK_BYTES - 3)}😀${'b'.repeat(10)}`;
    const chunks = splitYield(text, 0);
    expect(chunks.map((c) => c.output)).toEqual(['a'.repeat(MAX_CHUNK_BYTES - 3), `😀${'b'.repeat(10)}`]);
    expectWellFormed(chunks, MAX_CHUNK_BYTES);
  });

  it('measures control characters and quotes as escaped', () => {
    const text = '\u0000\u0001"\\\n\t\u001f x'.repeat(30);
    const chunks = splitYield(text, 0, { maxChunkBytes: 32 });
    expectWellFormed(chunks, 32);
    expect(joinChunks(chunks)).toEqual([text]);
  });

  it('keeps lone surrogates, which JSON writes as \\uXXXX', () => {
    const text = 'a\ud800b\udfffc'.repeat(20);
    const chunks = splitYield(text, 0, { maxChunkBytes: 32 });
    expectWellFormed(chunks, 32);
    expect(joinChunks(chunks)[0]).toBe(text);
  });

  it('fills parts of plain ASCII exactly', () => {
    const chunks = splitYield('x'.repeat(1000), 0, { maxChunkBytes: 102 });
    expect(chunks).toHaveLength(10);
  });

  it('marks each part with its yield, position and count', () => {
    const chunks = splitYield('abcdefghijklmnopqrstuvwxyz'.repeat(2), 3, { maxChunkBytes: 32 });
    expect(chunks.map((c) => c.metrics)).toEqual([
      { stream_index: 3, part_of: 3, part_index: 0, part_count: 2 },
      { stream_index: 4, part_of: 3, part_index: 1, part_count: 2 },
    ]);
  });
});

describe('splitYield: bytes', () => {
  it('sends bytes of every small length as base64 parts that decode on their own', () => {
    const limit = 32; // 30 base64 characters: 7 groups of 4, i.e. 21 bytes a part
    for (let length = 0; length <= 70; length++) {
      const bytes = Buffer.from(Array.from({ length }, (_, i) => (i * 37 + 11) % 256));
      const chunks = splitYield(bytes, 0, { maxChunkBytes: limit });
      expectWellFormed(chunks, limit);
      for (const chunk of chunks) {
        expect(chunk.metrics?.encoding).toBe('base64');
        const part = Buffer.from(chunk.output as string, 'base64');
        expect(part.toString('base64')).toBe(chunk.output); // no padding in the middle: decodes alone
      }
      chunks.slice(0, -1).forEach((chunk) => expect(Buffer.from(chunk.output as string, 'base64').length % 3).toBe(0));
      expect(joinChunks(chunks)).toEqual([bytes]);
    }
  });

  it('takes a Uint8Array view with an offset and an ArrayBuffer', () => {
    const backing = Uint8Array.from({ length: 64 }, (_, i) => i);
    const view = backing.subarray(5, 38); // 33 bytes starting at offset 5
    expect(joinChunks(splitYield(view, 0, { maxChunkBytes: 32 }))).toEqual([Buffer.from(view)]);
    const ab = backing.buffer.slice(3, 10);
    expect(splitYield(ab, 0)).toEqual([{ output: Buffer.from(ab).toString('base64'), metrics: { stream_index: 0, encoding: 'base64' } }]);
  });
});

describe('splitYield: arrays and objects', () => {
  it('sends an array that fits as itself', () => {
    const value = [1, 'two', { three: 3 }];
    expect(splitYield(value, 0)).toEqual([{ output: value, metrics: { stream_index: 0 } }]);
  });

  it('splits a big array into sub-arrays whose concatenation is the array', () => {
    const value = Array.from({ length: 200 }, (_, i) => ({ i, s: 'é'.repeat(i % 7) }));
    const chunks = splitYield(value, 0, { maxChunkBytes: 120 });
    expectWellFormed(chunks, 120);
    for (const chunk of chunks) expect(Array.isArray(chunk.output)).toBe(true);
    expect(chunks.flatMap((c) => c.output as unknown[])).toEqual(value);
    expect(joinChunks(chunks)).toEqual([value]);
  });

  it('carries an element bigger than the limit as JSON-text parts in its place', () => {
    const value = [1, 'x'.repeat(100), 2, 3, { big: 'y'.repeat(80), n: [1, 2] }, 'z'.repeat(100), -2.2250738585072014e-308];
    const chunks = splitYield(value, 0, { maxChunkBytes: 32 });
    expectWellFormed(chunks, 32);
    const pieces = chunks.filter((c) => c.metrics?.encoding === 'json');
    expect(new Set(pieces.map((c) => c.metrics?.element_index))).toEqual(new Set([1, 4, 5]));
    expect(joinChunks(chunks)).toEqual([value]);
  });

  it('splits a nested object as JSON text that joins and parses back', () => {
    const value = { user: { name: 'Zoë "Z" 😀', tags: ['a', 'b'] }, rows: Array.from({ length: 30 }, (_, i) => ({ i })) };
    const chunks = splitYield(value, 0, { maxChunkBytes: 50 });
    expectWellFormed(chunks, 50);
    for (const chunk of chunks) expect(chunk.metrics?.encoding).toBe('json');
    expect(JSON.parse(chunks.map((c) => c.output).join(''))).toEqual(value);
    expect(joinChunks(chunks)).toEqual([value]);
  });

  it('sends undefined, a function and a symbol as null; other primitives as themselves', () => {
    expect(stream([undefined, () => 1, Symbol('s'), null, 0, false]).map((c) => c.output)).toEqual([null, null, null, null, 0, false]);
  });
});

describe('splitYield: stream_index across yields', () => {
  it('runs on from yield to yield and joins back to the list of yields', () => {
    const values = ['a', 'b'.repeat(50), Buffer.from('bytes!'), [1, 2, 3], { k: 'v'.repeat(40) }, 'end'];
    const chunks = stream(values, 40);
    expectWellFormed(chunks, 40);
    expect(joinChunks(chunks)).toEqual([values[0], values[1], Buffer.from('bytes!'), values[3], values[4], values[5]]);
  });

  it('joins parts that arrive out of order, keeping the yields in order', () => {
    const chunks = stream(['first', 'x'.repeat(100), 'last'], 32);
    expect(chunks).toHaveLength(6);
    const shuffled = [chunks[0], ...chunks.slice(1, -1).reverse(), chunks.at(-1)] as StreamChunk[];
    expect(joinChunks(shuffled)).toEqual(['first', 'x'.repeat(100), 'last']);
  });

  it('refuses a stream with a missing part', () => {
    const chunks = splitYield('x'.repeat(100), 0, { maxChunkBytes: 32 });
    const error = thrown(() => joinChunks(chunks.slice(1)));
    expect(isServerlessWorkerError(error) && error.code).toBe('SW_MALFORMED_STREAM');
  });
});

describe('withMetrics', () => {
  it('merges handler metrics into every chunk, the runtime keys winning', () => {
    const tagged = withMetrics('x'.repeat(100), { output_tokens: 12, stream_index: 99, encoding: 'mine', scenario: 'a' });
    const chunks = splitYield(tagged, 5, { maxChunkBytes: 32 });
    expect(chunks.length).toBeGreaterThan(1);
    chunks.forEach((chunk, i) => {
      expect(chunk.metrics).toEqual({ output_tokens: 12, scenario: 'a', stream_index: 5 + i, part_of: 5, part_index: i, part_count: chunks.length });
    });
    expect(joinChunks(chunks)).toEqual(['x'.repeat(100)]);
  });

  it('merges nested tags, the outer one winning, on the small path too', () => {
    const chunks = splitYield(withMetrics(withMetrics('tok', { input_tokens: 1, output_tokens: 1 }), { output_tokens: 2 }), 0);
    expect(chunks).toEqual([{ output: 'tok', metrics: { input_tokens: 1, output_tokens: 2, stream_index: 0 } }]);
  });

  it('refuses metrics that cannot be serialized', () => {
    const error = thrown(() => splitYield(withMetrics('tok', { tokens: 1n }), 0));
    expect(isServerlessWorkerError(error) && error.code).toBe('SW_OUTPUT_NOT_SERIALIZABLE');
    expect((error as Error).message).toContain('a BigInt at metrics.tokens');
  });
});

describe('splitYield: values that cannot be serialized', () => {
  const cases: [string, () => unknown, string][] = [
    ['a BigInt', () => 5n, 'a BigInt at output'],
    ['a nested BigInt', () => ({ a: { b: 1n } }), 'a BigInt at output.a.b'],
    ['a BigInt in an array', () => [1, { 'odd key': [2n] }], 'a BigInt at output[1]["odd key"][0]'],
    [
      'a cycle',
      () => {
        const o: Record<string, unknown> = { a: { n: 1 } };
        (o.a as Record<string, unknown>).back = o;
        return o;
      },
      'a cycle at output.a.back (it refers back to output)',
    ],
    [
      'a cycle inside an array',
      () => {
        const list: unknown[] = [1];
        list.push({ list });
        return { list };
      },
      'a cycle at output.list[1].list (it refers back to output.list)',
    ],
  ];
  it.each(cases)('throws SW_OUTPUT_NOT_SERIALIZABLE for %s', (_name, make, found) => {
    const error = thrown(() => splitYield(make(), 0));
    expect(isServerlessWorkerError(error) && error.code).toBe('SW_OUTPUT_NOT_SERIALIZABLE');
    expect((error as Error).message).toContain(found);
  });

  it('does not mistake a shared (non-cyclic) object for a cycle', () => {
    const shared = { s: 1 };
    expect(joinChunks(splitYield({ a: shared, b: shared }, 0))).toEqual([{ a: shared, b: shared }]);
  });

  it('refuses a maxChunkBytes below the minimum', () => {
    const error = thrown(() => splitYield('x', 0, { maxChunkBytes: 31 }));
    expect(isServerlessWorkerError(error) && error.code).toBe('SW_INVALID_OPTIONS');
  });
});

describe('property: split then join gives the yields back, every chunk fits', () => {
  // Any UTF-16 unit, lone surrogates included, plus real emoji.
  const anyText = fc.string({
    unit: fc.oneof(
      fc.integer({ min: 0, max: 0xffff }).map((u) => String.fromCharCode(u)),
      fc.constantFrom('😀', '🎉', 'é', '"', '\n'),
    ),
    maxLength: 80,
  });
  const value = fc.oneof(
    anyText,
    fc.uint8Array({ maxLength: 60 }),
    fc.array(fc.oneof(anyText, fc.integer(), fc.jsonValue({ maxDepth: 2 })), { maxLength: 12 }),
    fc.jsonValue({ maxDepth: 3 }),
  );

  it('measures strings exactly: one chunk at their exact JSON size, two at one byte less', () => {
    const words = fc.constantFrom('plain ', 'say "hi"\n', 'tab\there ', '\u0001\u001f', 'back\\slash ', 'é€漢 ', '😀🎉', '\ud800', '\udc00x');
    fc.assert(
      fc.property(fc.array(words, { minLength: 6, maxLength: 40 }), (list) => {
        const text = list.join('');
        const exact = Buffer.byteLength(JSON.stringify(text));
        fc.pre(exact > 32);
        expect(splitYield(text, 0, { maxChunkBytes: exact })).toHaveLength(1);
        expect(splitYield(text, 0, { maxChunkBytes: exact - 1 }).length).toBeGreaterThan(1);
      }),
      { numRuns: 300 },
    );
  });

  it('holds for random values and random small limits', () => {
    fc.assert(
      fc.property(fc.array(value, { maxLength: 5 }), fc.integer({ min: 32, max: 200 }), (values, limit) => {
        const chunks = stream(values, limit);
        expectWellFormed(chunks, limit);
        const joined = joinChunks(chunks);
        expect(joined).toHaveLength(values.length);
        values.forEach((original, i) => {
          const back = joined[i];
          if (original instanceof Uint8Array) expect(Buffer.compare(back as Buffer, original)).toBe(0);
          else if (typeof original === 'string') expect(back).toBe(original);
          // A split value comes back through JSON: compare the JSON both give.
          else expect(JSON.stringify(back)).toBe(JSON.stringify(original));
        });
      }),
      { numRuns: 300 },
    );
  });
});
