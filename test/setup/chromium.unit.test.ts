/**
 * How test/setup/chromium.ts answers when CHROMIUM_PATH names no file: an error naming the
 * variable, the path and what was expected (the browser itself is exercised by
 * test/ui/dashboard.browser.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { findChromium } from './chromium.js';

describe('findChromium', () => {
  it('rejects a CHROMIUM_PATH that names no file, saying what it expected', async () => {
    const previous = process.env.CHROMIUM_PATH;
    process.env.CHROMIUM_PATH = '/nonexistent/chromium';
    try {
      await expect(findChromium()).rejects.toThrow('CHROMIUM_PATH is /nonexistent/chromium, but no file is there: expected a Chromium or Chrome executable.');
    } finally {
      if (previous === undefined) delete process.env.CHROMIUM_PATH;
      else process.env.CHROMIUM_PATH = previous;
    }
  });
});
