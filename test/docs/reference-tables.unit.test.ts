/**
 * The reference pages hold exactly the tables `npm run docs:settings` writes from the
 * declarations (scripts/reference-pages.ts), each in the one page named for it, and the
 * error codes page lists every code of `ERROR_CODES` with its HTTP status.
 */
import { describe, expect, it } from 'vitest';
import { allErrorCodes } from '../../scripts/reference-pages.js';
import { readMarked } from '../../src/settings/reference-table.js';
import { REFERENCE_PAGES, referenceTables } from '../../scripts/reference-pages.js';
import { markdownFiles, readRepoFile } from './markdown-files.js';

describe('generated reference tables', () => {
  const tables = referenceTables();

  it('names a page for every table', () => {
    expect(Object.keys(REFERENCE_PAGES).sort()).toEqual(Object.keys(tables).sort());
  });

  for (const [name, table] of Object.entries(tables)) {
    it(`${name}: its page holds it as generated (run npm run docs:settings), and no other page has its markers`, () => {
      const page = REFERENCE_PAGES[name] ?? '';
      expect(readMarked(readRepoFile(page), name), `${page}, table ${name}`).toBe(table);
      const others = markdownFiles().filter((file) => file !== page && readRepoFile(file).includes(`<!-- settings:${name}:start -->`));
      expect(others).toEqual([]);
    });
  }

  it('documents every error code with its HTTP status', () => {
    const table = readMarked(readRepoFile(REFERENCE_PAGES['error-codes'] ?? ''), 'error-codes') ?? '';
    const rows = new Map(
      table
        .split('\n')
        .filter((line) => line.startsWith('| `SW_'))
        .map((line) => {
          const cells = line.split(' | ').map((text) => text.replace(/^\| /, '').trim());
          return [cells[0]?.replaceAll('`', ''), Number(cells[1])] as const;
        }),
    );
    const codes = allErrorCodes();
    for (const [code, entry] of codes) expect(rows.get(code), `error table lacks ${code}`).toBe(entry.status);
    expect([...rows.keys()].sort()).toEqual(codes.map(([code]) => code).sort());
    expect(new Set(codes.map(([code]) => code)).size, 'a code in both packages').toBe(codes.length);
  });
});
