import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');

// The error codes table moved to docs/reference/error-codes.md: test/docs/reference-tables.unit.test.ts.
describe('README', () => {
  it('gives the two set-up commands', () => {
    expect(readme).toContain('npm ci && npm run example');
    expect(readme).toContain('npm test');
  });

  it('stays short: at most 300 lines, the rest in docs/', () => {
    expect(readme.trimEnd().split('\n').length).toBeLessThanOrEqual(300);
    expect(readme).toContain('/docs/README.md');
  });
});
