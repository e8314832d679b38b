import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { RUNTIME_VERSION } from '../src/version.js';

describe('RUNTIME_VERSION', () => {
  it('is the version in package.json', () => {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
    expect(RUNTIME_VERSION).toBe(pkg.version);
  });
});
