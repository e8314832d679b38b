/**
 * Reading and rerunning on the dashboard (issue 35), in headless Chromium against a
 * harness of our own (dashboard-fixture.ts): a job whose input is 500 KB (kept by the
 * harness as its text) reruns with that input unchanged, and its values route answers
 * the input itself; a job's log lines show one a row, pino lines parsed (level, message,
 * fields on demand) in the order logged; the jobs list keeps its filters in the URL, and
 * an error code's beginning finds the jobs with that code.
 */
import { isDeepStrictEqual } from 'node:util';
import { describe, expect, it } from 'vitest';
import { inputValue } from '../../src/job/index.js';
import { API_KEY, ENDPOINT } from './dashboard-fixture.js';
import { WAIT, logIn, useDashboardFile } from './dashboard-page.js';

const dashboard = useDashboardFile();

const auth = { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' };

async function submit(endpointId: string, body: string): Promise<string> {
  const answer = await fetch(`${dashboard.fixture.server.url}/v2/${endpointId}/run`, { method: 'POST', headers: auth, body });
  expect(answer.status, await answer.clone().text()).toBe(200);
  return ((await answer.json()) as { id: string }).id;
}

describe('reading and rerunning on the dashboard', () => {
  it('reruns a job with a 500 KB input as is: the new job gets the same input, unchanged', { timeout: 90_000 }, async () => {
    const input = { mode: 'sleep', ms: 1, rows: Array.from({ length: 5_000 }, (_, i) => ({ i, text: `row ${i} ${'é"\\'.repeat(30)}` })) };
    const body = JSON.stringify({ input });
    expect(body.length).toBeGreaterThan(500_000);
    const id = await submit(ENDPOINT, body);
    const endpoint = dashboard.fixture.harness.endpoint(ENDPOINT);
    await endpoint.waitForEnd(id, 30_000);
    // The values route answers the input itself (before: {"text": "<the JSON as a string>"}).
    const value = await fetch(`${dashboard.fixture.server.url}/ui/api/endpoints/${ENDPOINT}/jobs/${id}/values/input`, { headers: auth });
    expect(isDeepStrictEqual(await value.json(), input)).toBe(true);

    const { context, page } = await dashboard.browsers.open('rerun-large');
    page.on('dialog', (dialog) => void dialog.accept());
    await logIn(page, dashboard.fixture.uiUrl);
    await page.goto(`${dashboard.fixture.uiUrl}#/endpoint/${ENDPOINT}/job/${id}`);
    // Too large to edit in the page: the editor is not offered, "rerun as is" is.
    await page.locator('[data-test=rerun-too-large]').waitFor(WAIT);
    expect(await page.locator('[data-test=rerun-open]').isDisabled()).toBe(true);
    await page.locator('[data-test=rerun-as-is]').click();
    await page.waitForURL((url) => url.hash.includes('/job/') && !url.hash.endsWith(id), WAIT);
    const rerunId = decodeURIComponent(new URL(page.url()).hash.split('/job/')[1] ?? '');
    const rerun = await endpoint.find(rerunId);
    expect(rerun).toBeDefined();
    expect(isDeepStrictEqual(inputValue(rerun?.request.input), input)).toBe(true);
    await context.close();
  });

  it('reruns a small job with edited input from the editor, its input as it was', async () => {
    const id = await submit(ENDPOINT, JSON.stringify({ input: { mode: 'echo', note: 'small', nested: { list: [1, 2, 3] } } }));
    await dashboard.fixture.harness.endpoint(ENDPOINT).waitForEnd(id, 20_000);
    const { context, page } = await dashboard.browsers.open('rerun-small');
    await logIn(page, dashboard.fixture.uiUrl);
    await page.goto(`${dashboard.fixture.uiUrl}#/endpoint/${ENDPOINT}/job/${id}`);
    await page.locator('[data-test=rerun-open]').click();
    expect(JSON.parse(await page.locator('#rerun-json').inputValue(WAIT))).toEqual({ input: { mode: 'echo', note: 'small', nested: { list: [1, 2, 3] } } });
    await context.close();
  });

  it('shows log lines one a row, pino lines parsed with their fields on demand, in the order logged', { timeout: 60_000 }, async () => {
    const lines = ['first line', 'second line', 'third line'];
    const id = await submit(ENDPOINT, JSON.stringify({ input: { mode: 'log', lines } }));
    await dashboard.fixture.harness.endpoint(ENDPOINT).waitForEnd(id, 20_000);
    const { context, page } = await dashboard.browsers.open('log-lines');
    await logIn(page, dashboard.fixture.uiUrl);
    await page.goto(`${dashboard.fixture.uiUrl}#/endpoint/${ENDPOINT}/job/${id}`);
    const shown = page.locator('[data-test=job-logs] [data-test=log-line]', { hasText: 'line' });
    await expect.poll(() => shown.count(), WAIT).toBeGreaterThanOrEqual(3);
    const messages = await page.locator('[data-test=job-logs] [data-test=log-message]').allTextContents();
    expect(messages.filter((m) => lines.includes(m))).toEqual(lines);
    // Each line its own row: their tops differ.
    const tops = await shown.evaluateAll((elements) => elements.map((e) => e.getBoundingClientRect().top));
    expect(new Set(tops).size).toBe(tops.length);
    const first = page.locator('[data-test=job-logs] [data-test=log-line]', { hasText: 'first line' });
    expect(await first.getAttribute('data-level')).toBe('info');
    expect(await first.locator('[data-test=log-level]').textContent()).toBe('INFO');
    // Fields on demand: the step is folded until opened.
    const fields = first.locator('details.log-fields');
    expect(await fields.evaluate((e) => e.hasAttribute('open'))).toBe(false);
    await fields.locator('summary').click();
    expect(await fields.locator('pre').textContent()).toContain('"step": 0');
    // The raw JSON is not what is shown.
    expect(await first.textContent()).not.toContain('"level":30');
    await context.close();
  });

  it('keeps the filters in the URL, and finds jobs by the beginning of their error code', { timeout: 60_000 }, async () => {
    const failed = await submit(ENDPOINT, JSON.stringify({ input: { mode: 'fail-long', chars: 10 } }));
    await dashboard.fixture.harness.endpoint(ENDPOINT).waitForEnd(failed, 20_000);
    const { context, page } = await dashboard.browsers.open('url-filters');
    await logIn(page, dashboard.fixture.uiUrl);
    await page.goto(`${dashboard.fixture.uiUrl}#/endpoint/${ENDPOINT}`);
    await page.locator('#filter-error').fill('SW_HANDLER');
    await page.locator('#state-filter').selectOption('FAILED');
    await expect.poll(() => new URL(page.url()).hash, WAIT).toMatch(/^#\/endpoint\/local\?(?=.*error=SW_HANDLER)(?=.*state=FAILED)/);
    await page.locator('[data-test=jobs-row]', { hasText: failed }).waitFor(WAIT);
    // A reload (or the link shared) opens the same filtered list.
    await page.reload();
    expect(await page.locator('#filter-error').inputValue(WAIT)).toBe('SW_HANDLER');
    expect(await page.locator('#state-filter').inputValue()).toBe('FAILED');
    await page.locator('[data-test=jobs-row]', { hasText: failed }).waitFor(WAIT);
    const statuses = await page.locator('[data-test=jobs-row] [data-test=status]').allTextContents();
    expect(statuses.every((s) => s === 'FAILED')).toBe(true);
    await context.close();
  });
});
