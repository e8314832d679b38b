/**
 * The runtime version is a literal in src/version.ts (a bundle has no package.json to
 * read): it must stay equal to package.json's version.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { RUNTIME_VERSION } from '../../src/version.js';

describe('RUNTIME_VERSION', () => {
  it("equals package.json's version", () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    expect(RUNTIME_VERSION).toBe(pkg.version);
  });
});
