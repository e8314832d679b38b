/**
 * `/docs` for people (issue 27), in headless Chromium against a harness of our own with
 * an API key (dashboard-fixture.ts): the page loads without the key and asks for it (a
 * wrong one gets the API's message), then shows Swagger UI; "Try it out" on /run starts
 * from the worker's test input (no "webhook": "string" placeholder) and the request it
 * sends carries the key and is accepted; the dashboard links to it.
 */
import { describe, expect, it } from 'vitest';
import { API_KEY, ENDPOINT } from './dashboard-fixture.js';
import { WAIT, logIn, useDashboardFile } from './dashboard-page.js';

const TEST_INPUT = { input: { mode: 'echo', prompt: 'from test_input.json' } };
const dashboard = useDashboardFile({ testInput: TEST_INPUT });

describe('/docs in a browser', () => {
  it('asks for the key instead of a raw 401, then tries /run from the test input with the key', async () => {
    const { context, page } = await dashboard.browsers.open('docs');
    const answer = await page.goto(`${dashboard.fixture.server.url}/docs`);
    expect(answer?.status()).toBe(200);
    await page.locator('#docs-api-key').waitFor(WAIT);
    await page.locator('#docs-api-key').fill('not-the-key');
    await page.locator('#docs-api-key').press('Enter');
    await page.locator('.sw-login [role=alert]', { hasText: 'SW_UNAUTHORIZED' }).waitFor(WAIT);
    await page.locator('#docs-api-key').fill(API_KEY);
    await page.locator('#docs-api-key').press('Enter');
    await page.locator('.swagger-ui .info').waitFor(WAIT);
    const run = page.locator(`.opblock-post:has([data-path="/v2/${ENDPOINT}/run"])`).first();
    await run.locator('.opblock-summary').click();
    await run.locator('.try-out__btn').click();
    const body = run.locator('textarea.body-param__text');
    await body.waitFor(WAIT);
    const text = await body.inputValue();
    expect(JSON.parse(text)).toEqual(TEST_INPUT);
    expect(text).not.toContain('"string"');
    await run.locator('.execute').click();
    const status = run.locator('.live-responses-table tbody .response-col_status').first();
    await status.waitFor(WAIT);
    expect((await status.textContent())?.trim()).toBe('200');
    await context.close();
  });

  it('lists every route of each endpoint under its name, the /v1 routes, no Explore box, and links back to /ui (issue 35)', async () => {
    const auth = { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' };
    const v1 = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
      const response = await fetch(`${dashboard.fixture.server.url}/v1${path}`, {
        method,
        headers: auth,
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      expect(response.ok, `${method} /v1${path}: ${response.status}`).toBe(true);
      return (response.status === 204 ? undefined : await response.json()) as T;
    };
    const template = await v1<{ id: string }>('POST', '/templates', { name: 'docs-names', imageName: 'docs/none:1', isServerless: true, category: 'CPU' });
    const endpoint = await v1<{ id: string }>('POST', '/endpoints', { name: 'text-embedder', templateId: template.id, workersMin: 0, workersMax: 1 });
    try {
      const { context, page } = await dashboard.browsers.open('docs-routes');
      await logIn(page, dashboard.fixture.uiUrl);
      await page.goto(`${dashboard.fixture.server.url}/docs`);
      await page.locator('.swagger-ui .info').waitFor(WAIT);
      // Every route of the queue API, for each endpoint.
      for (const route of [
        'run',
        'runsync',
        'status/{jobId}',
        'status-sync/{jobId}',
        'stream/{jobId}',
        'cancel/{jobId}',
        'retry/{jobId}',
        'purge-queue',
        'requests',
        'health',
      ]) {
        expect(await page.locator(`[data-path="/v2/${ENDPOINT}/${route}"]`).count(), route).toBeGreaterThan(0);
        expect(await page.locator(`[data-path="/v2/${endpoint.id}/${route}"]`).count(), `${endpoint.id} ${route}`).toBeGreaterThan(0);
      }
      // The endpoint under its name, with its id; the management API's routes.
      await page
        .locator('.opblock-tag', { hasText: `text-embedder (${endpoint.id})` })
        .first()
        .waitFor(WAIT);
      for (const path of ['/v1/endpoints', '/v1/endpoints/{id}', '/v1/templates', '/v1/networkvolumes', '/v1/pods']) {
        expect(await page.locator(`[data-path="${path}"]`).count(), path).toBeGreaterThan(0);
      }
      // No Swagger top bar with its Explore box; a way back to the dashboard.
      expect(await page.locator('.topbar, .download-url-input').count()).toBe(0);
      await page.locator('[data-test=back-to-ui]').click();
      await page.locator('header nav').waitFor(WAIT);
      expect(new URL(page.url()).pathname).toBe('/ui');
      await context.close();
    } finally {
      await v1('DELETE', `/endpoints/${endpoint.id}`);
    }
  });

  it('meets a refused key kept from before with a neutral prompt, not an error (issue 48)', async () => {
    const { context, page } = await dashboard.browsers.open('docs-stale-key');
    await page.goto(`${dashboard.fixture.server.url}/docs`);
    await page.locator('#docs-api-key').waitFor(WAIT);
    // A key kept in this tab from before (another harness's, an old one), then the page opened again.
    await page.evaluate(() => sessionStorage.setItem('serverless-worker-api-key', 'an-old-key'));
    await page.reload();
    await page.locator('.sw-login .sw-note', { hasText: 'The API key this browser kept is not the one this harness was started with' }).waitFor(WAIT);
    expect(await page.locator('.sw-login [role=alert]').count()).toBe(0);
    expect(await page.locator('.sw-login').textContent()).not.toContain('SW_UNAUTHORIZED');
    expect(await page.evaluate(() => sessionStorage.getItem('serverless-worker-api-key'))).toBeNull();
    // A key typed here and refused: that is an error, said as the API says it.
    await page.locator('#docs-api-key').fill('typed-and-wrong');
    await page.locator('#docs-api-key').press('Enter');
    await page.locator('.sw-login [role=alert]', { hasText: 'SW_UNAUTHORIZED' }).waitFor(WAIT);
    await context.close();
  });

  it('masks the key in the curl Swagger shows for a request it sent (issue 48)', async () => {
    const { context, page } = await dashboard.browsers.open('docs-curl');
    await logIn(page, dashboard.fixture.uiUrl);
    await page.goto(`${dashboard.fixture.server.url}/docs`);
    await page.locator('.swagger-ui .info').waitFor(WAIT);
    const health = page.locator(`.opblock-get:has([data-path="/v2/${ENDPOINT}/health"])`).first();
    await health.locator('.opblock-summary').click();
    await health.locator('.try-out__btn').click();
    await health.locator('.execute').click();
    const status = health.locator('.live-responses-table tbody .response-col_status').first();
    await status.waitFor(WAIT);
    expect((await status.textContent())?.trim()).toBe('200');
    const curl = health.locator('.curl-command, .request-snippets').first();
    await curl.waitFor(WAIT);
    const text = (await curl.textContent()) ?? '';
    expect(text).toContain('Authorization: Bearer <API key>');
    expect(text).not.toContain(API_KEY);
    await context.close();
  });

  it('is linked from the dashboard, and the key given there serves it', async () => {
    const { context, page } = await dashboard.browsers.open('docs-link');
    await logIn(page, dashboard.fixture.uiUrl);
    await page.locator('[data-test=docs-link]').click();
    await page.locator('.swagger-ui .info').waitFor(WAIT);
    expect(await page.locator('#docs-api-key').count()).toBe(0);
    await context.close();
  });
});
