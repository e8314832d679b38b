import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../src/job/index.js';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
const table = readme.slice(readme.indexOf('<!-- error-codes:start -->'), readme.indexOf('<!-- error-codes:end -->'));

describe('README', () => {
  it('documents every error code with its HTTP status', () => {
    const rows = new Map(
      table
        .split('\n')
        .filter((line) => line.startsWith('| `SW_'))
        .map((line) => {
          const cells = line.split('|').map((cell) => cell.trim());
          return [cells[1]?.replaceAll('`', ''), Number(cells[2])] as const;
        }),
    );
    for (const [code, entry] of Object.entries(ERROR_CODES)) {
      expect(rows.get(code), `README error table lacks ${code}`).toBe(entry.status);
    }
    expect([...rows.keys()].sort()).toEqual(Object.keys(ERROR_CODES).sort());
  });

  it('gives the two set-up commands', () => {
    expect(readme).toContain('npm ci && npm run example');
    expect(readme).toContain('npm test');
  });
});
