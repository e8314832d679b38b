/**
 * The dashboard bugs of issue 27, each fixed and checked in headless Chromium against a
 * harness of our own (dashboard-fixture.ts): a jobs list whose fetch fails shows no rows
 * of the endpoint shown before; a running attempt's "Ran" time goes on; a dead
 * load-balancing worker leaves a trace when the harness forgets it; no view is wider than
 * an 800 px window; a harness that stops answering gets a banner.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_KEY, ENDPOINT, startDashboardFixture, type DashboardFixture } from './dashboard-fixture.js';
import { WAIT, logIn, useDashboardFile } from './dashboard-page.js';

const dashboard = useDashboardFile();

const scrollWidth = async (page: Page): Promise<number> => Number(await page.evaluate('document.documentElement.scrollWidth'));

describe('dashboard bugs fixed', () => {
  it("shows none of the previous endpoint's rows when the next endpoint's list cannot be read", async () => {
    const endpoint = dashboard.fixture.harness.endpoint('rows-a');
    for (let i = 0; i < 3; i++) await endpoint.submit({ input: { i } });
    const { context, page } = await dashboard.browsers.open('rows-after-error');
    await logIn(page, dashboard.fixture.uiUrl);
    await page.goto(`${dashboard.fixture.uiUrl}#/endpoint/rows-a`);
    await page.locator('[data-test=page-info]').filter({ hasText: '1–3 of 3' }).waitFor(WAIT);
    // An endpoint id the API refuses (400): its error, under its own title, and no rows.
    await page.goto(`${dashboard.fixture.uiUrl}#/endpoint/${encodeURIComponent('bad id!')}`);
    await page.locator('[data-test=error]').filter({ hasText: 'SW_INVALID_REQUEST' }).waitFor(WAIT);
    expect(await page.locator('h1').textContent()).toContain('bad id!');
    expect(await page.locator('[data-test=jobs-row]').count()).toBe(0);
    expect(await page.locator('[data-test=page-info]').textContent()).toBe('0–0 of 0');
    await context.close();
  });

  it("counts a running attempt's time on: Ran does not freeze while the job runs", async () => {
    const endpoint = dashboard.fixture.harness.endpoint(ENDPOINT);
    const job = await endpoint.submit({ input: { mode: 'sleep', ms: 60_000 } });
    try {
      const { context, page } = await dashboard.browsers.open('ran');
      await logIn(page, dashboard.fixture.uiUrl);
      await page.goto(`${dashboard.fixture.uiUrl}#/endpoint/${ENDPOINT}/job/${job.id}`);
      const ran = page.locator('[data-test=attempt-row]', { hasText: 'running' }).locator('[data-test=attempt-ran]');
      const first = await ran.textContent(WAIT);
      // Nothing about the job changes while it sleeps: the time moves on the page's clock alone.
      await expect.poll(() => ran.textContent(), WAIT).not.toBe(first);
      await context.close();
    } finally {
      await endpoint.cancel(job.id);
    }
  });

  it('fits an 800 px window: the endpoints, jobs and job views scroll their wide tables instead of the page', async () => {
    const endpoint = dashboard.fixture.harness.endpoint(ENDPOINT);
    const { id } = await endpoint.submit({ input: { mode: 'echo', words: 'a long line of input '.repeat(40) } });
    await endpoint.waitForEnd(id, 20_000);
    const { context, page } = await dashboard.browsers.open('narrow', { width: 800, height: 900 });
    await logIn(page, dashboard.fixture.uiUrl);
    await page.locator('[data-test=endpoints]').waitFor(WAIT);
    expect(await scrollWidth(page)).toBeLessThanOrEqual(800);
    await page.goto(`${dashboard.fixture.uiUrl}#/endpoint/${ENDPOINT}`);
    await page.locator('[data-test=jobs-row]').first().waitFor(WAIT);
    expect(await scrollWidth(page)).toBeLessThanOrEqual(800);
    await page.goto(`${dashboard.fixture.uiUrl}#/endpoint/${ENDPOINT}/job/${id}`);
    await page.locator('h1 [data-test=status]').filter({ hasText: 'COMPLETED' }).waitFor(WAIT);
    expect(await scrollWidth(page)).toBeLessThanOrEqual(800);
    await context.close();
  });
});

describe('dashboard bugs fixed, on a harness of its own', () => {
  let own: DashboardFixture;

  beforeAll(async () => {
    own = await startDashboardFixture({ loadBalancing: { pingIntervalMs: 100, forgetAfterMs: 400 } });
  }, 60_000);

  afterAll(async () => {
    await own?.close();
  });

  it('keeps a trace of a load-balancing worker the harness forgot after it stayed unhealthy', async () => {
    const registered = await fetch(`${own.server.url}/v2/lb-dead/load-balancing/workers`, {
      method: 'POST',
      headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
      // Nothing listens there: unhealthy at once, forgotten 400 ms later.
      body: JSON.stringify({ url: 'http://127.0.0.1:9', workerId: 'lb-dead-1' }),
    });
    expect(registered.status).toBeLessThan(300);
    const { context, page } = await dashboard.browsers.open('lb-gone');
    await logIn(page, own.uiUrl);
    const gone = page.locator('[data-test=panel-load-balancing] [data-test=lb-gone]', { hasText: 'lb-dead-1' });
    await gone.waitFor(WAIT);
    expect(await gone.textContent()).toContain('forgotten: unhealthy for');
    expect(await gone.textContent()).toContain('/ping failed');
    // When it went, in the dashboard's one time format (day, clock time, zone, age).
    expect(await gone.locator('time').textContent()).toMatch(/\d{2}:\d{2}:\d{2} \S+ · \d+ (s|min) ago$/);
    expect(await page.locator('[data-test=panel-load-balancing] [data-test=lb-worker]', { hasText: 'lb-dead-1' }).count()).toBe(0);
    await context.close();
  });

  it('shows a banner while the harness is unreachable', async () => {
    const { context, page } = await dashboard.browsers.open('unreachable');
    await logIn(page, own.uiUrl);
    await page.locator('[data-test=endpoints], [data-test=no-endpoints]').first().waitFor(WAIT);
    expect(await page.locator('[data-test=unreachable]').count()).toBe(0);
    await own.server.close();
    const banner = page.locator('[data-test=unreachable]');
    await banner.waitFor(WAIT);
    expect(await banner.getAttribute('role')).toBe('alert');
    expect(await banner.textContent()).toContain('The harness is not answering since');
    // The times in the one format of every view: date, clock time with its zone, age.
    expect(await banner.textContent()).toMatch(/since .*\d{2}:\d{2}:\d{2} \S+ · \d+ s ago: /);
    expect(await banner.textContent()).toMatch(/What this page shows is from .*\d{2}:\d{2}:\d{2} \S+ · \d+ s ago;/);
    await context.close();
  });
});
