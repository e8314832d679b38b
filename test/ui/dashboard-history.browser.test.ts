/**
 * History and bulk work on the dashboard (issue 27), in headless Chromium against a
 * harness of our own (dashboard-fixture.ts): the jobs list filters by text in input or
 * output, kind, worker and submission time, sorts oldest first, shows dates and a queue
 * age that runs on; selected jobs are cancelled (and retries refused are listed) in one
 * go; a job reruns with edited input; an error cut in the list opens in full. The
 * filters themselves are checked on both stores by the store conformance suite.
 */
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { API_KEY, ENDPOINT } from './dashboard-fixture.js';
import { WAIT, logIn, useDashboardFile } from './dashboard-page.js';

const dashboard = useDashboardFile();

const info = (page: Page) => page.locator('[data-test=page-info]');
const rowIds = (page: Page) => page.locator('[data-test=jobs-row] td:nth-child(2) a').allTextContents();

describe('history and bulk work on the dashboard', () => {
  it('filters by text in input or output, kind and time, sorts oldest first, and shows dates and a running queue age', async () => {
    const endpoint = dashboard.fixture.harness.endpoint('history');
    const first = await endpoint.submit({ input: { prompt: 'Paint a lighthouse' } });
    await endpoint.submit({ input: { prompt: 'a cat' } }, { sync: true });
    const third = await endpoint.submit({ input: { prompt: 'another LIGHTHOUSE at dusk' } });
    const { context, page } = await dashboard.browsers.open('history-filters');
    await logIn(page, dashboard.fixture.uiUrl);
    await page.goto(`${dashboard.fixture.uiUrl}#/endpoint/history`);
    await info(page).filter({ hasText: '1–3 of 3' }).waitFor(WAIT);
    expect(await page.locator('[data-test=jobs-row] [data-test=submitted]').first().textContent()).toMatch(/\d{1,2}:\d{2}:\d{2}/);
    await page.locator('#filter-text').fill('lighthouse');
    await info(page).filter({ hasText: '1–2 of 2' }).waitFor(WAIT);
    expect(await rowIds(page)).toEqual([third.id, first.id]);
    await page.locator('#filter-order').selectOption('oldest');
    await expect.poll(() => rowIds(page), WAIT).toEqual([first.id, third.id]);
    await page.locator('[data-test=clear-filters]').click();
    await page.locator('#filter-kind').selectOption('runsync');
    await info(page).filter({ hasText: '1–1 of 1' }).waitFor(WAIT);
    // A time range after every submission: nothing.
    await page.locator('[data-test=clear-filters]').click();
    await page.locator('#filter-from').fill('2999-01-01T00:00:00');
    await info(page).filter({ hasText: '0–0 of 0' }).waitFor(WAIT);
    await page.locator('[data-test=clear-filters]').click();
    // A queued job's age runs on while nothing about it changes.
    const age = page.locator('[data-test=jobs-row]', { hasText: first.id }).locator('[data-test=queue-age]');
    const before = await age.textContent(WAIT);
    await expect.poll(() => age.textContent(), WAIT).not.toBe(before);
    await context.close();
  });

  it('refuses a bad filter with a message naming it and what is expected', async () => {
    for (const [query, message] of [
      ['from=yesterday', 'from must be an ISO 8601 time (2026-01-01T10:00:00Z) or epoch milliseconds'],
      ['kind=batch', 'kind must be run or runsync'],
      ['order=random', 'order must be newest, oldest, slowest (longest execution) or waited (longest queue wait)'],
    ] as const) {
      const answer = await fetch(`${dashboard.fixture.server.url}/ui/api/endpoints/history/jobs?${query}`, { headers: { authorization: `Bearer ${API_KEY}` } });
      expect(answer.status, query).toBe(400);
      const body = (await answer.json()) as { error: { code: string; message: string } };
      expect(body.error.code, query).toBe('SW_INVALID_REQUEST');
      expect(body.error.message, query).toContain(message);
    }
  });

  it('filters by the worker that ran a job, once it ended', async () => {
    const endpoint = dashboard.fixture.harness.endpoint(ENDPOINT);
    const { id } = await endpoint.submit({ input: { mode: 'echo', marker: 'by-worker' } });
    const ended = await endpoint.waitForEnd(id, 20_000);
    expect(ended.status).toBe('COMPLETED');
    const { context, page } = await dashboard.browsers.open('history-worker');
    await logIn(page, dashboard.fixture.uiUrl);
    await page.goto(`${dashboard.fixture.uiUrl}#/endpoint/${ENDPOINT}`);
    const row = page.locator('[data-test=jobs-row]', { hasText: id });
    const worker = (await row.locator('td').nth(8).textContent(WAIT)) ?? '';
    expect(worker.length).toBeGreaterThan(0);
    await page.locator('#filter-worker').fill(worker);
    await page.locator('#filter-text').fill('by-worker');
    await info(page).filter({ hasText: '1–1 of 1' }).waitFor(WAIT);
    await page.locator('#filter-worker').fill('no-such-worker');
    await info(page).filter({ hasText: '0–0 of 0' }).waitFor(WAIT);
    await context.close();
  });

  it('cancels the selected jobs in one go, and lists the retries refused', async () => {
    const endpoint = dashboard.fixture.harness.endpoint('history-bulk');
    for (let i = 0; i < 5; i++) await endpoint.submit({ input: { i } });
    const { context, page } = await dashboard.browsers.open('history-bulk');
    page.on('dialog', (dialog) => void dialog.accept());
    await logIn(page, dashboard.fixture.uiUrl);
    await page.goto(`${dashboard.fixture.uiUrl}#/endpoint/history-bulk`);
    await info(page).filter({ hasText: '1–5 of 5' }).waitFor(WAIT);
    await page.locator('[data-test=select-all]').check();
    expect(await page.locator('[data-test=selected-count]').textContent()).toBe('5 selected');
    await page.locator('[data-test=bulk-cancel]').click();
    await page.locator('[data-test=bulk-outcome]', { hasText: 'Cancelled 5 of 5' }).waitFor(WAIT);
    expect((await endpoint.stateCounts()).CANCELLED).toBe(5);
    await page.locator('[data-test=select-job]').first().check();
    await page.locator('[data-test=bulk-retry]').click();
    const refused = page.locator('[data-test=bulk-outcome]', { hasText: 'Retried 0 of 1; 1 refused:' });
    await refused.waitFor(WAIT);
    expect(await refused.textContent()).toContain('SW_RETRY_NOT_ALLOWED');
    await context.close();
  });

  it('reruns a job with edited input, and opens an error cut in the list in full', async () => {
    const endpoint = dashboard.fixture.harness.endpoint(ENDPOINT);
    const { id } = await endpoint.submit({ input: { mode: 'echo', note: 'original' } });
    await endpoint.waitForEnd(id, 20_000);
    const { context, page } = await dashboard.browsers.open('history-rerun');
    page.on('dialog', (dialog) => void dialog.accept());
    await logIn(page, dashboard.fixture.uiUrl);
    await page.goto(`${dashboard.fixture.uiUrl}#/endpoint/${ENDPOINT}/job/${id}`);
    await page.locator('[data-test=rerun-open]').click();
    const editor = page.locator('#rerun-json');
    expect(JSON.parse(await editor.inputValue(WAIT))).toEqual({ input: { mode: 'echo', note: 'original' } });
    await editor.fill(JSON.stringify({ input: { mode: 'echo', note: 'edited' } }));
    await page.locator('[data-test=rerun]').click();
    await page.waitForURL((url) => url.hash.includes('/job/') && !url.hash.endsWith(id), WAIT);
    await page.locator('h1 [data-test=status]').filter({ hasText: 'COMPLETED' }).waitFor(WAIT);
    expect(JSON.parse((await page.locator('[data-test=job-output]').textContent()) ?? 'null')).toEqual({ echo: { mode: 'echo', note: 'edited' } });

    const failing = await endpoint.submit({ input: { mode: 'fail-long', chars: 1_000 } });
    await endpoint.waitForEnd(failing.id, 20_000);
    await page.goto(`${dashboard.fixture.uiUrl}#/endpoint/${ENDPOINT}`);
    const cell = page.locator('[data-test=jobs-row]', { hasText: failing.id }).locator('[data-test=error-cell]');
    await cell.locator('summary').click();
    const full = cell.locator('.err-full');
    await full.waitFor(WAIT);
    expect(((await full.textContent()) ?? '').length).toBeGreaterThan(250);
    expect(await cell.locator('a').getAttribute('href')).toContain(failing.id);
    await context.close();
  });

  it('charts one endpoint or all over a chosen range, with hover values in readable units', { timeout: 60_000 }, async () => {
    const endpoint = dashboard.fixture.harness.endpoint(ENDPOINT);
    for (let i = 0; i < 6; i++) await endpoint.waitForEnd((await endpoint.submit({ input: { mode: 'sleep', ms: 20 + i * 30 } })).id, 20_000);
    const { context, page } = await dashboard.browsers.open('charts');
    await logIn(page, dashboard.fixture.uiUrl);
    const rateChart = page.locator('[data-test=chart-rate]');
    await rateChart.waitFor(WAIT);
    await page.locator('#chart-endpoint').selectOption(ENDPOINT);
    await page.locator('#chart-range').selectOption('5');
    // Hover the middle of the chart: its legend shows each line's value there, in its unit.
    const over = rateChart.locator('.u-over');
    await over.scrollIntoViewIfNeeded();
    const box = await over.boundingBox();
    expect(box).not.toBeNull();
    const ended = rateChart.locator('.u-legend .u-series').nth(1).locator('.u-value');
    let wiggle = 0;
    const hovered = async () => {
      // A new point each tick redraws the chart: the pointer moves a little before each read, as a hand does.
      wiggle = (wiggle + 1) % 5;
      await page.mouse.move((box?.x ?? 0) + (box?.width ?? 0) / 2 + wiggle, (box?.y ?? 0) + (box?.height ?? 0) / 2);
      return ended.textContent();
    };
    await expect.poll(hovered, WAIT).toMatch(/^\d+(\.\d+)?\/s$/);
    // Execution times read as durations ("80 ms", "1.5 s"), never bare thousands: hovered where the jobs ended (the first interval shown).
    const exec = page.locator('[data-test=chart-exec]');
    const execOver = exec.locator('.u-over');
    await execOver.scrollIntoViewIfNeeded();
    const execBox = await execOver.boundingBox();
    const p50 = exec.locator('.u-legend .u-series').nth(1).locator('.u-value');
    await expect
      .poll(async () => {
        wiggle = (wiggle + 1) % 3;
        await page.mouse.move((execBox?.x ?? 0) + 1 + wiggle, (execBox?.y ?? 0) + (execBox?.height ?? 0) / 2);
        return p50.textContent();
      }, WAIT)
      .toMatch(/^\d+(\.\d)? (ms|s)$/);
    await context.close();
  });
});
