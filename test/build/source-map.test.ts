/**
 * The bundle's source map reduced to the author's files (src/build/source-map.ts):
 * read back with Node's own SourceMap (what `--enable-source-maps` uses), a position in
 * the author's code maps as before, and one in dependency code maps to nothing, also
 * where Node's lookup would fall back to an earlier line's segment.
 */
import { SourceMap } from 'node:module';
import { describe, expect, it } from 'vitest';
import { authorSourceFilter } from '../../packages/platform/src/build/bundle-output.js';
import { isAuthorSource, keepSources } from '../../packages/platform/src/build/source-map.js';

// Generated line 0: col 0 -> a.ts 1:1, col 10 -> dep 1:1, col 20 -> a.ts 2:1; line 1: col 0 -> dep 3:1.
const MAP = {
  version: 3,
  sources: ['../src/a.ts', '../node_modules/dep/b.js'],
  sourcesContent: ['const a = 1;\nthrow new Error();\n', 'module.exports = 1;\n'],
  names: [],
  mappings: 'AAAA,UCAA,UDCA;ACCA',
};

interface Entry {
  originalSource?: string;
  originalLine?: number;
}

function lookup(map: unknown, line: number, column: number): Entry {
  return new SourceMap(map as ConstructorParameters<typeof SourceMap>[0]).findEntry(line, column) as Entry;
}

describe('keepSources', () => {
  it("keeps the author's sources with their text and unmaps dependency code", () => {
    // The fixture means what the comments say.
    expect(lookup(MAP, 0, 15).originalSource).toMatch(/node_modules\/dep\/b\.js$/);
    expect(lookup(MAP, 1, 3).originalLine).toBe(2);
    const reduced = keepSources(MAP);
    expect(reduced.sources).toEqual(['../src/a.ts']);
    expect(reduced.sourcesContent).toEqual([MAP.sourcesContent[0]]);
    expect(lookup(reduced, 0, 5)).toMatchObject({ originalLine: 0 });
    expect(lookup(reduced, 0, 5).originalSource).toMatch(/src\/a\.ts$/);
    expect(lookup(reduced, 0, 25)).toMatchObject({ originalLine: 1 });
    // Dependency code: no source (Node then prints the bundle's own position).
    expect(lookup(reduced, 0, 15).originalSource).toBeUndefined();
    // Line 1 starts in dependency code: not the author's line 2 of the line before.
    expect(lookup(reduced, 1, 3).originalSource).toBeUndefined();
  });

  it('keeps everything (same lookups) when every source is kept, and refuses what is not a version 3 map', () => {
    const all = keepSources(MAP, () => true);
    expect(all.sources).toEqual(MAP.sources);
    for (const [line, column] of [
      [0, 5],
      [0, 15],
      [0, 25],
      [1, 3],
    ] as const)
      expect(lookup(all, line, column)).toEqual(lookup(MAP, line, column));
    expect(() => keepSources({ version: 2, sources: [], names: [], mappings: '' })).toThrow();
    expect(() => keepSources({ ...MAP, mappings: 'A!' })).toThrow(/invalid base-64 VLQ character/);
  });

  it("tells the author's files from dependencies and from this package's own folders", () => {
    expect(isAuthorSource('/app/src/worker.ts')).toBe(true);
    expect(isAuthorSource('/app/node_modules/zod/index.js')).toBe(false);
    expect(isAuthorSource('..\\node_modules\\pino\\pino.js')).toBe(false);
    const keep = authorSourceFilter('/repo/dist/worker.js.map', ['/repo/src', '/repo/dist']);
    expect(keep('../examples/echo/worker.ts')).toBe(true);
    expect(keep('../src/serve.ts')).toBe(false);
    expect(keep('../node_modules/zod/v4/core.js')).toBe(false);
  });
});
