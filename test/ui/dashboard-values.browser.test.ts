/**
 * Large values never block a dashboard page (issue 27), in headless Chromium against a
 * harness of our own (dashboard-fixture.ts): a job with a 19.9 MB output opens at once
 * with a preview and its size, every live message about it stays small, and the whole
 * output downloads; a stream of 50 000 chunks shows its count and last chunks, its
 * messages stay small, and every chunk loads on demand; a value that can no longer be
 * read shows the API's error instead of loading forever.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ENDPOINT } from './dashboard-fixture.js';
import { WAIT, logIn, readEvents, useDashboardFile } from './dashboard-page.js';

/** No live message may come near the size that made the page reconnect forever (4 MiB): a job view is a few KiB. */
const SMALL_FRAME = 256 * 1024;

const dashboard = useDashboardFile();

const jobStatus = (page: import('playwright-core').Page) => page.locator('h1 [data-test=status]');

describe('large values on the dashboard', () => {
  it('opens a job with a 19.9 MB output: a preview with its size, small live messages, the whole output downloaded', async () => {
    const chars = 19_900_000;
    const endpoint = dashboard.fixture.harness.endpoint(ENDPOINT);
    const { id } = await endpoint.submit({ input: { mode: 'big', chars } });
    const ended = await endpoint.waitForEnd(id, 60_000);
    expect(ended.status).toBe('COMPLETED');
    // The job's live messages as a page gets them: the job view carries a preview, not the output.
    const frames = await readEvents(dashboard.fixture.server.url, `endpoint=${ENDPOINT}&job=${id}`, (f) => f.some((x) => x.event === 'job'));
    const jobFrame = frames.find((f) => f.event === 'job');
    expect(jobFrame?.data).toMatchObject({ status: 'COMPLETED', output: { complete: false, bytes: chars + 2 } });
    for (const frame of frames) expect(frame.size).toBeLessThan(SMALL_FRAME);
    // The first message is the state now; the chart history (megabytes with many endpoints) comes over HTTP.
    expect(frames[0]?.event).toBe('hello');
    expect(frames[0]?.data).not.toHaveProperty('series');

    const { context, page } = await dashboard.browsers.open('big-output');
    await logIn(page, dashboard.fixture.uiUrl);
    await page.goto(`${dashboard.fixture.uiUrl}#/endpoint/${ENDPOINT}/job/${id}`);
    await jobStatus(page).filter({ hasText: 'COMPLETED' }).waitFor(WAIT);
    expect(await page.locator('[data-test=job-output-size]').textContent()).toContain('19.0 MiB in all');
    expect(await page.locator('[data-test=job-output-preview]').textContent()).toMatch(/^(0123456789)+/);
    // Too large to draw into the page: it downloads.
    expect(await page.locator('[data-test=load-output]').count()).toBe(0);
    const [file] = await Promise.all([page.waitForEvent('download', WAIT), page.locator('[data-test=download-output]').click()]);
    expect(file.suggestedFilename()).toBe(`${id}-output.json`);
    const saved = await file.path();
    const text = readFileSync(saved, 'utf8');
    expect(text.length).toBe(chars + 2);
    expect(JSON.parse(text)).toHaveLength(chars);
    await context.close();
  });

  it('follows a stream of 50 000 chunks: small messages, the count and the last chunks, every chunk on demand', async () => {
    const count = 50_000;
    const { context, page } = await dashboard.browsers.open('burst');
    await logIn(page, dashboard.fixture.uiUrl);
    const endpoint = dashboard.fixture.harness.endpoint(ENDPOINT);
    const { id } = await endpoint.submit({ input: { mode: 'burst', count } });
    await page.goto(`${dashboard.fixture.uiUrl}#/endpoint/${ENDPOINT}/job/${id}`);
    const events = readEvents(dashboard.fixture.server.url, `endpoint=${ENDPOINT}&job=${id}`, (f) =>
      f.some((x) => x.event === 'job' && (x.data as { status: string }).status === 'COMPLETED'),
    );
    await jobStatus(page).filter({ hasText: 'COMPLETED' }).waitFor(WAIT);
    await expect.poll(() => page.locator('[data-test=chunk-count]').textContent(), WAIT).toBe(String(count));
    await expect.poll(async () => ((await page.locator('[data-test=stream-text]').textContent()) ?? '').endsWith(`c${count - 1} `), WAIT).toBe(true);
    // The page holds the last chunks only; the list shows the last 100.
    expect(await page.locator('[data-test=chunk]').count()).toBeLessThanOrEqual(100);
    for (const frame of await events) expect(frame.size).toBeLessThan(SMALL_FRAME);
    // Every unread chunk, loaded on demand.
    await page.locator('[data-test=load-chunks]').click();
    const all = page.locator('[data-test=stream-all]');
    await all.waitFor(WAIT);
    const expected = Array.from({ length: count }, (_, i) => `c${i} `).join('');
    expect(await all.textContent()).toBe(expected);
    await context.close();
  });

  it('shows the error of a value that can no longer be read, never endless loading; a long error is cut and loads whole', async () => {
    const endpoint = dashboard.fixture.harness.endpoint('values-gone');
    const chars = 100_000;
    const { id } = await endpoint.submit({ input: { mode: 'echo', blob: 'y'.repeat(chars) } });
    const { context, page } = await dashboard.browsers.open('value-gone');
    await logIn(page, dashboard.fixture.uiUrl);
    await page.goto(`${dashboard.fixture.uiUrl}#/endpoint/values-gone/job/${id}`);
    await page.locator('[data-test=job-input-preview]').waitFor(WAIT);
    expect(await page.locator('[data-test=job-input-size]').textContent()).toMatch(/97\.\d KiB in all/);
    // The job goes (its endpoint deleted) while the page shows it: loading its input answers the API's error,
    // shown beside the input's buttons (the attempts' card may show the same error when it reloads).
    dashboard.fixture.harness.deleteEndpoint('values-gone');
    await page.locator('[data-test=load-input]').click();
    const error = page.locator('[data-test=actions-input] [data-test=error]', { hasText: 'SW_JOB_NOT_FOUND' });
    await error.waitFor(WAIT);
    expect(await page.locator('[data-test=busy-input]').count()).toBe(0);

    // A failure with a 200 000-character message: cut on the page, the whole error on demand.
    const failing = dashboard.fixture.harness.endpoint(ENDPOINT);
    const failed = await failing.submit({ input: { mode: 'fail-long', chars: 200_000 } });
    await page.goto(`${dashboard.fixture.uiUrl}#/endpoint/${ENDPOINT}/job/${failed.id}`);
    await page.locator('[data-test=error-clipped]').waitFor(WAIT);
    const shown = (await page.locator('[data-test=job-error]').textContent()) ?? '';
    expect(shown.length).toBeLessThan(60_000);
    await page.locator('[data-test=load-error]').click();
    await page.locator('[data-test=error-clipped]').waitFor({ state: 'detached', ...WAIT });
    expect(((await page.locator('[data-test=job-error]').textContent()) ?? '').length).toBeGreaterThan(200_000);
    await context.close();
  });
});
