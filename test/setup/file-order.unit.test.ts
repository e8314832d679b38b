/**
 * The suite's start order (test/setup/file-order.ts): unknown files first, then the longest
 * recorded, ties by path; and the recorded table names only test files that exist.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { byExpectedSeconds, readFileSeconds } from './file-order.js';

describe('the order npm test starts its files in', () => {
  it('starts files the table does not know first, then the longest, ties by path', () => {
    const order = ['b.test.ts', 'short.test.ts', 'new.test.ts', 'long.test.ts', 'a.test.ts'].sort(
      byExpectedSeconds({ 'short.test.ts': 1, 'long.test.ts': 60, 'a.test.ts': 5, 'b.test.ts': 5 }),
    );
    expect(order).toEqual(['new.test.ts', 'long.test.ts', 'a.test.ts', 'b.test.ts', 'short.test.ts']);
  });

  it('records seconds for test files outside the unit tier only, each of which exists', () => {
    const seconds = readFileSeconds();
    const root = fileURLToPath(new URL('../..', import.meta.url));
    const paths = Object.keys(seconds);
    expect(paths.length).toBeGreaterThan(50);
    expect(paths.filter((path) => path.endsWith('.unit.test.ts'))).toEqual([]);
    // A file renamed or removed since the table was recorded: record it anew (npm run test:order).
    expect(paths.filter((path) => !existsSync(`${root}${path}`))).toEqual([]);
  });
});
