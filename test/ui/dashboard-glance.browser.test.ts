/**
 * Reading the dashboard at a glance (issue 35 item 8), in headless Chromium against a
 * harness of our own (dashboard-fixture.ts): jobs per second per endpoint in the
 * endpoints table, a queue-depth chart, and wait and execution by endpoint (a line each);
 * times with their zone and age in one format;
 * copy buttons for ids and "copy as curl" (what lands on the clipboard); a stream of
 * object chunks shown as a list, not run together as `}{`.
 */
import { describe, expect, it } from 'vitest';
import { API_KEY, ENDPOINT } from './dashboard-fixture.js';
import { WAIT, logIn, useDashboardFile } from './dashboard-page.js';

const dashboard = useDashboardFile();

describe('reading at a glance', () => {
  it('shows jobs per second per endpoint and a queue-depth chart on the overview', async () => {
    const endpoint = dashboard.fixture.harness.endpoint(ENDPOINT);
    for (let i = 0; i < 5; i++) await endpoint.waitForEnd((await endpoint.submit({ input: { mode: 'echo', i } })).id, 20_000);
    // A second endpoint with jobs ended: taken and completed as a worker would, under its own id.
    const second = dashboard.fixture.harness.endpoint('glance-two');
    for (let i = 0; i < 3; i++) {
      const { id } = await second.submit({ input: { i } });
      await second.take('glance-worker', 1);
      await second.complete(id, 'glance-worker', { kind: 'output', output: i });
    }
    await dashboard.fixture.harness.endpoint('glance-queue').submit({ input: { waiting: true } });
    const { context, page } = await dashboard.browsers.open('glance-overview');
    await logIn(page, dashboard.fixture.uiUrl);
    const row = page.locator('[data-test=endpoint-row]', { hasText: ENDPOINT }).first();
    await row.waitFor(WAIT);
    // Rebuilt from the jobs kept: 5 ended in the last minute, so the rate is above 0.
    await expect.poll(async () => Number((await row.locator('[data-test=jobs-per-second]').textContent()) ?? 'NaN'), WAIT).toBeGreaterThan(0);
    const chart = page.locator('[data-test=chart-queue]');
    await chart.waitFor(WAIT);
    expect(await chart.locator('figcaption').textContent()).toContain('Queue depth');
    // Its legend names the endpoints drawn, the one with a queued job among them.
    await chart.locator('.u-legend', { hasText: 'glance-queue' }).waitFor(WAIT);
    // Wait and execution time with all endpoints chosen: one line per endpoint with jobs ended, named in the legend.
    for (const test of ['chart-wait-endpoints', 'chart-exec-endpoints']) {
      const byEndpoint = page.locator(`[data-test=${test}]`);
      await byEndpoint.waitFor(WAIT);
      // The legend's first row is the time; then one row per line.
      expect((await byEndpoint.locator('.u-legend .u-series .u-label').allTextContents()).slice(1)).toEqual(['glance-two', ENDPOINT]);
    }
    await dashboard.fixture.harness.endpoint('glance-queue').purgeQueue();
    await context.close();
  }, 60_000);

  it('writes times with their zone and age, copies ids and curl commands, and lists object chunks', async () => {
    const endpoint = dashboard.fixture.harness.endpoint(ENDPOINT);
    const tokens = [
      { token: 'a', n: 1 },
      { token: 'b', n: 2 },
      { token: 'c', n: 3 },
    ];
    const { id } = await endpoint.submit({ input: { mode: 'stream', tokens, delayMs: 10 } });
    await endpoint.waitForEnd(id, 20_000);
    const { context, page } = await dashboard.browsers.open('glance-job');
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: dashboard.fixture.server.url });
    await logIn(page, dashboard.fixture.uiUrl);
    await page.goto(`${dashboard.fixture.uiUrl}#/endpoint/${ENDPOINT}/job/${id}`);
    await page.locator('[data-test=job-id]').waitFor(WAIT);
    expect(await page.title()).toContain(`Job ${id}`);
    // One format: day, time, zone, age; the ISO time on hover.
    const submitted = page.locator('[data-test=job-submitted]');
    expect(await submitted.textContent()).toMatch(/\d{2}:\d{2}:\d{2} \S+ · \d+ (s|min) ago/);
    expect(await submitted.getAttribute('title')).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    // Object chunks, one item each.
    const items = page.locator('[data-test=stream-object]');
    await expect.poll(() => items.count(), WAIT).toBe(3);
    expect(JSON.parse((await items.nth(1).textContent()) ?? '')).toEqual({ token: 'b', n: 2 });
    expect(await page.locator('[data-test=stream-text]').count()).toBe(0);
    // Copies: the id, then /run of its input as curl (the key as a variable, never the key).
    const clipboard = async (): Promise<string> => String(await page.evaluate('navigator.clipboard.readText()'));
    await page.locator('h1 [data-test=copy]').click();
    await expect.poll(clipboard, WAIT).toBe(id);
    await page.locator('[data-test=copy-run-curl]').click();
    await expect.poll(clipboard, WAIT).toContain(`/v2/${ENDPOINT}/run`);
    const curl = await clipboard();
    expect(curl).toContain('$SERVERLESS_WORKER_API_KEY');
    expect(curl).not.toContain(API_KEY);
    const body = /-d '(.*)'$/s.exec(curl)?.[1];
    expect(JSON.parse(body ?? '')).toEqual({ input: { mode: 'stream', tokens, delayMs: 10 } });
    await page.locator('[data-test=copy-status-curl]').click();
    await expect.poll(clipboard, WAIT).toContain(`/v2/${ENDPOINT}/status/${id}`);
    await context.close();
  });
});
