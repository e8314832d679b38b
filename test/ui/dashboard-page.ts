/**
 * @module test/ui/dashboard-page
 * What the dashboard's browser tests share: Chromium launched once per file, a fresh
 * context per test (its screenshot in test-artifacts/ when the test fails), logging in
 * by keyboard, reading the live event stream as a client would.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, onTestFailed } from 'vitest';
import { API_KEY, launchChromium, startDashboardFixture, type DashboardFixture } from './dashboard-fixture.js';

const ARTIFACTS = join(process.cwd(), 'test-artifacts');
export const WAIT = { timeout: 30_000 };

/** Chromium, launched on first use and closed by `close()` (call it in afterAll). */
export class BrowserPool {
  #launching: Promise<Browser> | undefined;

  browser(): Promise<Browser> {
    this.#launching ??= launchChromium();
    return this.#launching;
  }

  /** A fresh context and page (`viewport` default 1280×900); on failure its screenshot goes to test-artifacts/. */
  async open(name: string, viewport = { width: 1280, height: 900 }): Promise<{ context: BrowserContext; page: Page }> {
    const context = await (await this.browser()).newContext({ viewport, acceptDownloads: true });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    onTestFailed(async () => {
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: join(ARTIFACTS, `dashboard-${name}.png`), fullPage: true }).catch(() => {});
      if (errors.length > 0) console.log(`page errors in ${name}:`, errors);
    });
    return { context, page };
  }

  async close(): Promise<void> {
    await this.#launching?.then((browser) => browser.close()).catch(() => {});
  }
}

/** What a dashboard test file shares: one harness fixture and one Chromium for the whole file. */
export interface DashboardFile {
  /** The file's fixture (started in beforeAll; reading it before then throws). */
  readonly fixture: DashboardFixture;
  readonly browsers: BrowserPool;
}

/**
 * The set-up every dashboard browser test file makes: a fixture started before its tests
 * (`options` as startDashboardFixture takes them), Chromium launched on first use, both
 * closed after the file.
 */
export function useDashboardFile(options: Parameters<typeof startDashboardFixture>[0] = {}): DashboardFile {
  const browsers = new BrowserPool();
  let fixture: DashboardFixture | undefined;
  beforeAll(async () => {
    fixture = await startDashboardFixture(options);
  }, 60_000);
  afterAll(async () => {
    await browsers.close();
    await fixture?.close();
  });
  return {
    browsers,
    get fixture(): DashboardFixture {
      if (fixture === undefined) throw new Error('the dashboard fixture is read before its beforeAll started it');
      return fixture;
    },
  };
}

/** Open `uiUrl` and log in by keyboard: the key, then Enter; waits for the page past the login. */
export async function logIn(page: Page, uiUrl: string, key = API_KEY): Promise<void> {
  await page.goto(uiUrl);
  await page.locator('#api-key').fill(key);
  await page.locator('#api-key').press('Enter');
  await page.locator('header').waitFor(WAIT);
}

/**
 * Read `/ui/api/events?query` as a page does until `until(frames)` is true or 30 s pass;
 * answers every frame read with its size in characters.
 */
export async function readEvents(
  baseUrl: string,
  query: string,
  until: (frames: ReadonlyArray<{ event: string; data: unknown; size: number }>) => boolean,
): Promise<Array<{ event: string; data: unknown; size: number }>> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), 30_000);
  const frames: Array<{ event: string; data: unknown; size: number }> = [];
  try {
    const response = await fetch(`${baseUrl}/ui/api/events?${query}`, { headers: { authorization: `Bearer ${API_KEY}` }, signal: abort.signal });
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += value;
      let at: number;
      while ((at = text.indexOf('\n\n')) >= 0) {
        const block = text.slice(0, at);
        text = text.slice(at + 2);
        const event = /^event: (.*)$/m.exec(block)?.[1] ?? 'message';
        const data = /^data: (.*)$/m.exec(block)?.[1];
        frames.push({ event, data: data === undefined ? undefined : JSON.parse(data), size: block.length });
      }
      if (until(frames)) break;
    }
  } catch (error) {
    if (!abort.signal.aborted) throw error;
  } finally {
    clearTimeout(timer);
    abort.abort();
  }
  return frames;
}
