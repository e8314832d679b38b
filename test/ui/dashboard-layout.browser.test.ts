/**
 * The dashboard at an operator's 1440×900 (issue 48 item 9), in headless Chromium against a
 * harness of our own (dashboard-fixture.ts): the overview's charts say they are loading until
 * the harness's history arrives (not flat charts), and sit in the first screen; a crash loop's
 * scale events show each distinct stderr tail once; the jobs list's Error column fits the
 * page, its whole text on hover; time filters go into the URL in UTC with their zone, and a
 * link with or without a zone is read into the local-time inputs.
 */
import { describe, expect, it } from 'vitest';
import type { Route } from 'playwright-core';
import { fetchOkJson } from '../kit/index.js';
import { API_KEY, ENDPOINT, IMPORT_ERROR_IMAGE, IMPORT_ERROR_LINE } from './dashboard-fixture.js';
import { WAIT, logIn, useDashboardFile } from './dashboard-page.js';

const dashboard = useDashboardFile();
const SCREEN = { width: 1440, height: 900 };
const auth = { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' };

function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  return fetchOkJson<T>(`${dashboard.fixture.server.url}${path}`, method, body, auth);
}

describe('the dashboard at 1440×900', () => {
  it('says the charts are loading until the history arrives, then shows them in the first screen', async () => {
    const endpoint = dashboard.fixture.harness.endpoint(ENDPOINT);
    const { id } = await endpoint.submit({ input: { mode: 'echo' } });
    await endpoint.waitForEnd(id, 20_000);
    const { context, page } = await dashboard.browsers.open('charts-loading', SCREEN);
    // The page reads the overview once, then again after the live stream's hello for the history:
    // that second read is held until the loading state has been seen.
    let reads = 0;
    let release: (() => void) | undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    await page.route('**/ui/api/overview', async (route: Route) => {
      // Reads with the key: the one before the login is refused and not counted.
      if (route.request().headers()['authorization'] !== undefined) reads += 1;
      if (reads === 2) await held;
      await route.continue();
    });
    await logIn(page, dashboard.fixture.uiUrl);
    const loading = page.locator('[data-test=charts-loading]');
    await loading.waitFor(WAIT);
    expect(await loading.getAttribute('aria-busy')).toBe('true');
    expect(await page.locator('[data-test=chart-rate]').count()).toBe(0);
    await expect.poll(() => reads, WAIT).toBe(2);
    release?.();
    const chart = page.locator('[data-test=chart-rate]');
    await chart.waitFor(WAIT);
    expect(await loading.count()).toBe(0);
    const box = await chart.boundingBox();
    expect(box).not.toBeNull();
    // In the first screen: its top is above the fold, without scrolling.
    expect((box?.y ?? Infinity) + 40).toBeLessThan(SCREEN.height);
    await context.close();
  });

  it("shows a crash loop's stderr tail once, the repeats pointing to it", { timeout: 90_000 }, async () => {
    const template = await call<{ id: string }>('POST', '/v1/templates', {
      name: 'layout-crash',
      imageName: IMPORT_ERROR_IMAGE,
      isServerless: true,
      category: 'CPU',
    });
    const endpoint = await call<{ id: string }>('POST', '/v1/endpoints', { name: 'crash-loop', templateId: template.id, workersMin: 1, workersMax: 1 });
    try {
      const { context, page } = await dashboard.browsers.open('stderr-once', SCREEN);
      await logIn(page, dashboard.fixture.uiUrl);
      await page.goto(`${dashboard.fixture.uiUrl}#/workers`);
      const events = page.locator('[data-test=scale-event]', { hasText: endpoint.id });
      // Three crashes with the same tail, at least.
      await expect.poll(async () => await page.locator('[data-test=scale-event-stderr-same]').count(), { timeout: 60_000 }).toBeGreaterThanOrEqual(2);
      const tails = page.locator('[data-test=scale-event-stderr]');
      expect(await tails.count()).toBe(1);
      expect(await tails.first().textContent()).toContain(IMPORT_ERROR_LINE);
      expect(await tails.first().isVisible()).toBe(true);
      expect(await events.count()).toBeGreaterThanOrEqual(3);
      await context.close();
    } finally {
      await call('DELETE', `/v1/endpoints/${endpoint.id}`);
    }
  });

  it("fits the jobs list's Error column in the page, the whole message on hover", async () => {
    const endpoint = dashboard.fixture.harness.endpoint(ENDPOINT);
    const { id } = await endpoint.submit({ input: { mode: 'fail-long', chars: 400 } });
    await endpoint.waitForEnd(id, 20_000);
    const { context, page } = await dashboard.browsers.open('error-column', SCREEN);
    await logIn(page, dashboard.fixture.uiUrl);
    await page.goto(`${dashboard.fixture.uiUrl}#/jobs?state=FAILED`);
    const cell = page.locator('[data-test=jobs-row]', { hasText: id }).locator('[data-test=error-cell]');
    await cell.waitFor(WAIT);
    const box = await cell.boundingBox();
    expect((box?.x ?? 0) + (box?.width ?? Infinity)).toBeLessThanOrEqual(SCREEN.width);
    expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(SCREEN.width);
    expect(await cell.locator('summary').getAttribute('title')).toMatch(/^Error: long failure #{100,}/);
    await context.close();
  });

  // Three navigations, each poll bounded by WAIT (30 s): the test's own bound above them, so that a poll that never
  // comes true fails with its own message (a CI run once hit the 30 s default here, no step named).
  it('writes time filters in UTC with their zone, and reads links with or without one into local time', { timeout: 120_000 }, async () => {
    const context = await (await dashboard.browsers.browser()).newContext({ viewport: SCREEN, timezoneId: 'America/New_York' });
    try {
      const page = await context.newPage();
      await logIn(page, dashboard.fixture.uiUrl);
      const param = (name: string) => new URLSearchParams(new URL(page.url()).hash.split('?')[1] ?? '').get(name);
      // A link in UTC: the input shows New York time (UTC-5 in January).
      await page.goto(`${dashboard.fixture.uiUrl}#/endpoint/${ENDPOINT}?from=2026-01-05T15:00:07Z`);
      await expect.poll(() => page.locator('#filter-from').inputValue(), WAIT).toBe('2026-01-05T10:00:07');
      expect(param('from')).toBe('2026-01-05T15:00:07Z');
      // A link of before, without a zone: read as local time, written back with its zone.
      await page.goto(`${dashboard.fixture.uiUrl}#/endpoint/${ENDPOINT}?to=2026-01-05T10:30:05`);
      await expect.poll(() => page.locator('#filter-to').inputValue(), WAIT).toBe('2026-01-05T10:30:05');
      await expect.poll(() => param('to'), WAIT).toBe('2026-01-05T15:30:05Z');
      // Typed in the input: the URL carries the instant in UTC.
      await page.locator('#filter-from').fill('2026-02-01T08:30:09');
      await expect.poll(() => param('from'), WAIT).toBe('2026-02-01T13:30:09Z');
    } finally {
      await context.close();
    }
  });
});
