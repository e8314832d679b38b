/**
 * How test/setup/chromium.ts answers when CHROMIUM_PATH names no file: an error naming the
 * variable, the path and what was expected (the browser itself is exercised by
 * test/ui/dashboard.browser.test.ts). Through locateChromium, not findChromium: that one keeps
 * the process's first answer, and under `npm test` a browser file may have asked in this
 * worker before (one project for every tier: tiers.ts).
 */
import { describe, expect, it } from 'vitest';
import { locateChromium } from './chromium.js';

describe('locateChromium', () => {
  it('rejects a CHROMIUM_PATH that names no file, saying what it expected', async () => {
    const previous = process.env.CHROMIUM_PATH;
    process.env.CHROMIUM_PATH = '/nonexistent/chromium';
    try {
      await expect(locateChromium()).rejects.toThrow('CHROMIUM_PATH is /nonexistent/chromium, but no file is there: expected a Chromium or Chrome executable.');
    } finally {
      if (previous === undefined) delete process.env.CHROMIUM_PATH;
      else process.env.CHROMIUM_PATH = previous;
    }
  });
});
