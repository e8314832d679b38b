/**
 * Logs on the dashboard (issue 27), in headless Chromium against a harness of our own
 * whose launcher runs real processes (dashboard-fixture.ts): a launch command that fails
 * on a missing library shows its stderr (the ImportError) with its crash in the scale
 * events; a job run by a launched worker shows the worker's lines that name it, and the
 * worker's page its log tail, followed live (a later job's line appears without a reload);
 * a job run by the in-process worker shows the lines its handler logged with ctx.log as
 * they come.
 */
import { describe, expect, it } from 'vitest';
import { fetchOkJson } from '../kit/index.js';
import { API_KEY, ENDPOINT, IMPORT_ERROR_IMAGE, IMPORT_ERROR_LINE, WORKER_IMAGE } from './dashboard-fixture.js';
import { WAIT, logIn, useDashboardFile } from './dashboard-page.js';

const dashboard = useDashboardFile();
const LONG = { timeout: 60_000 };

const auth = { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' };

function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  return fetchOkJson<T>(`${dashboard.fixture.server.url}${path}`, method, body, auth);
}

async function endpointOn(image: string, name: string): Promise<string> {
  const template = await call<{ id: string }>('POST', '/v1/templates', { name: `${name}-template`, imageName: image, isServerless: true, category: 'CPU' });
  const endpoint = await call<{ id: string }>('POST', '/v1/endpoints', { name, templateId: template.id, workersMin: 1, workersMax: 1 });
  return endpoint.id;
}

describe('logs on the dashboard', () => {
  it("shows a failed launch's stderr with its crash in the scale events", async () => {
    const endpointId = await endpointOn(IMPORT_ERROR_IMAGE, 'import-error');
    try {
      const { context, page } = await dashboard.browsers.open('launch-stderr');
      await logIn(page, dashboard.fixture.uiUrl);
      await page.locator('header nav a', { hasText: 'Workers' }).click();
      const stderr = page.locator('[data-test=scale-event]', { hasText: endpointId }).locator('[data-test=scale-event-stderr]').first();
      await stderr.waitFor(WAIT);
      expect(await stderr.textContent()).toContain(IMPORT_ERROR_LINE);
      await context.close();
    } finally {
      await call('DELETE', `/v1/endpoints/${endpointId}`);
    }
  });

  it("shows a launched worker's lines naming a job on the job's page, and the worker's log tail followed live", LONG, async () => {
    const endpointId = await endpointOn(WORKER_IMAGE, 'logging-worker');
    try {
      const first = await call<{ id: string }>('POST', `/v2/${endpointId}/run`, { input: { tag: 'first' } });
      const { context, page } = await dashboard.browsers.open('job-logs');
      await logIn(page, dashboard.fixture.uiUrl);
      await page.goto(`${dashboard.fixture.uiUrl}#/endpoint/${endpointId}/job/${first.id}`);
      await page.locator('h1 [data-test=status]').filter({ hasText: 'COMPLETED' }).waitFor(LONG);
      const jobLine = page.locator('[data-test=job-logs] [data-test=log-line]', { hasText: first.id }).first();
      await jobLine.waitFor(WAIT);
      expect(await jobLine.textContent()).toContain('"event":"started"');
      // The worker that ran it: its page, its log tail.
      await page.locator('[data-test=job-worker] a').click();
      await page.locator('[data-test=worker-logs] [data-test=log-line]', { hasText: first.id }).first().waitFor(WAIT);
      // Followed live: a later job's line appears on the open page.
      const second = await call<{ id: string }>('POST', `/v2/${endpointId}/run`, { input: { tag: 'second' } });
      await page.locator('[data-test=worker-logs] [data-test=log-line]', { hasText: second.id }).first().waitFor(LONG);
      // The launched workers' table links each worker to its page.
      const workerPath = new URL(page.url()).hash;
      await page.locator('header nav a', { hasText: 'Endpoints' }).click();
      const link = page.locator(`[data-test=launcher-worker-link][href="${workerPath}"]`);
      await link.waitFor(WAIT);
      expect(await link.getAttribute('href')).toBe(workerPath);
      await context.close();
    } finally {
      await call('DELETE', `/v1/endpoints/${endpointId}`);
    }
  });

  it('shows the lines an in-process worker logs for a job (ctx.log) while it runs', async () => {
    const endpoint = dashboard.fixture.harness.endpoint(ENDPOINT);
    const { id } = await endpoint.submit({ input: { mode: 'log', lines: ['loading the model', 'step two of two'], delayMs: 1_500 } });
    const { context, page } = await dashboard.browsers.open('in-process-logs');
    await logIn(page, dashboard.fixture.uiUrl);
    await page.goto(`${dashboard.fixture.uiUrl}#/endpoint/${ENDPOINT}/job/${id}`);
    const lines = page.locator('[data-test=job-logs] [data-test=log-line]');
    await lines.filter({ hasText: 'loading the model' }).first().waitFor(WAIT);
    expect(await lines.filter({ hasText: 'loading the model' }).first().textContent()).toContain('in-process');
    await lines.filter({ hasText: 'step two of two' }).first().waitFor(WAIT);
    // Each line's time in the dashboard's one format, to the millisecond, with its zone and age; ISO on hover.
    const at = lines.first().locator('[data-test=log-at]');
    expect(await at.textContent()).toMatch(/\d{2}:\d{2}:\d{2}\.\d{3} \S+ · \d+ (s|min) ago$/);
    expect(await at.getAttribute('title')).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    // 40 lines logged at once (many in one millisecond): shown in the order logged.
    const burst = Array.from({ length: 40 }, (_, i) => `burst line ${i}`);
    const many = await endpoint.submit({ input: { mode: 'log', lines: burst, together: true } });
    await endpoint.waitForEnd(many.id, 20_000);
    await page.goto(`${dashboard.fixture.uiUrl}#/endpoint/${ENDPOINT}/job/${many.id}`);
    const messages = page.locator('[data-test=job-logs] [data-test=log-message]');
    await expect.poll(() => messages.count(), WAIT).toBe(40);
    expect(await messages.allTextContents()).toEqual(burst);
    await context.close();
  });
});
