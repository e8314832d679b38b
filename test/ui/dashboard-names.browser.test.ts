/**
 * Names, health and honest counts on the dashboard (issue 27), in headless Chromium
 * against a harness of our own (dashboard-fixture.ts): an endpoint made through /v1
 * shows its name beside its id, and turns unhealthy with the launcher's reason when its
 * worker command keeps crashing; queued jobs with no worker get a warning; the
 * endpoints table labels its counts as jobs kept now and shows /health's totals beside
 * them; a finished job keeps the worker that ran it.
 */
import { describe, expect, it } from 'vitest';
import { fetchOkJson } from '../kit/index.js';
import { API_KEY, CRASH_IMAGE, ENDPOINT } from './dashboard-fixture.js';
import { WAIT, logIn, useDashboardFile } from './dashboard-page.js';

const dashboard = useDashboardFile();

const auth = { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' };

function v1<T>(method: string, path: string, body?: unknown): Promise<T> {
  return fetchOkJson<T>(`${dashboard.fixture.server.url}/v1${path}`, method, body, auth);
}

describe('names, health and counts on the dashboard', () => {
  it("shows a /v1 endpoint's name beside its id, unhealthy with the launcher's reason while its command keeps crashing", async () => {
    const template = await v1<{ id: string }>('POST', '/templates', { name: 'names-crash', imageName: CRASH_IMAGE, isServerless: true, category: 'CPU' });
    const endpoint = await v1<{ id: string }>('POST', '/endpoints', { name: 'image-resizer', templateId: template.id, workersMin: 1, workersMax: 1 });
    try {
      const { context, page } = await dashboard.browsers.open('names');
      await logIn(page, dashboard.fixture.uiUrl);
      const row = page.locator('[data-test=endpoint-row]', { hasText: 'image-resizer' });
      await row.waitFor(WAIT);
      expect(await row.locator('[data-test=endpoint-id]').textContent()).toBe(endpoint.id);
      await row.locator('[data-test=health] .badge', { hasText: 'unhealthy' }).waitFor(WAIT);
      expect(await row.locator('[data-test=health-reason]').textContent()).not.toBe('');
      // The name follows the endpoint to its jobs view and the workers view's scale events.
      await row.locator('a', { hasText: 'image-resizer' }).click();
      await page.locator('h1', { hasText: 'image-resizer' }).waitFor(WAIT);
      expect(await page.locator('h1 [data-test=endpoint-id]').textContent()).toBe(endpoint.id);
      await page.locator('header nav a', { hasText: 'Workers' }).click();
      await page.locator('[data-test=scale-event]', { hasText: 'image-resizer' }).first().waitFor(WAIT);
      await context.close();
    } finally {
      await v1('DELETE', `/endpoints/${endpoint.id}`);
    }
  });

  it('warns of jobs queued on an endpoint with no worker', async () => {
    const queued = dashboard.fixture.harness.endpoint('nobody-home');
    for (let i = 0; i < 4; i++) await queued.submit({ input: { i } });
    const { context, page } = await dashboard.browsers.open('no-worker');
    await logIn(page, dashboard.fixture.uiUrl);
    const row = page.locator('[data-test=endpoint-row]', { hasText: 'nobody-home' });
    await row.waitFor(WAIT);
    expect(await row.locator('[data-test=health] .badge').textContent()).toBe('warning');
    expect(await row.locator('[data-test=health-reason]').textContent()).toContain('4 queued, no worker');
    await queued.purgeQueue();
    await context.close();
  });

  it("labels the table's counts as jobs kept now, shows /health's totals beside them, and keeps a finished job's worker", async () => {
    const endpoint = dashboard.fixture.harness.endpoint(ENDPOINT);
    const { id } = await endpoint.submit({ input: { mode: 'echo' } });
    await endpoint.waitForEnd(id, 20_000);
    const health = (await (await fetch(`${dashboard.fixture.server.url}/v2/${ENDPOINT}/health`, { headers: auth })).json()) as { jobs: { completed: number } };
    const { context, page } = await dashboard.browsers.open('counts');
    await logIn(page, dashboard.fixture.uiUrl);
    const table = page.locator('[data-test=endpoints]');
    await table.waitFor(WAIT);
    expect(await table.locator('thead').textContent()).toContain('Jobs kept now, by state');
    expect(await table.locator('thead').textContent()).toContain('Since created (/health)');
    const row = table.locator('[data-test=endpoint-row]', { hasText: ENDPOINT }).first();
    await expect.poll(async () => Number(await row.locator('[data-test=total-completed]').textContent()), WAIT).toBeGreaterThanOrEqual(health.jobs.completed);
    // The worker that ran a finished job, in the list and on its page.
    await page.goto(`${dashboard.fixture.uiUrl}#/endpoint/${ENDPOINT}`);
    const listed = page.locator('[data-test=jobs-row]', { hasText: id });
    await listed.waitFor(WAIT);
    expect(((await listed.locator('td').nth(8).textContent()) ?? '').length).toBeGreaterThan(0);
    await page.goto(`${dashboard.fixture.uiUrl}#/endpoint/${ENDPOINT}/job/${id}`);
    await page.locator('[data-test=job-worker]').waitFor(WAIT);
    expect(await page.locator('[data-test=job-worker]').textContent()).not.toBe('—');
    await context.close();
  });
});
