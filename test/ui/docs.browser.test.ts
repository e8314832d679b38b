/**
 * `/docs` for people (issue 27), in headless Chromium against a harness of our own with
 * an API key (dashboard-fixture.ts): the page loads without the key and asks for it (a
 * wrong one gets the API's message), then shows Swagger UI; "Try it out" on /run starts
 * from the worker's test input (no "webhook": "string" placeholder) and the request it
 * sends carries the key and is accepted; the dashboard links to it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_KEY, ENDPOINT, startDashboardFixture, type DashboardFixture } from './dashboard-fixture.js';
import { BrowserPool, WAIT, logIn } from './dashboard-page.js';

let fixture: DashboardFixture;
const browsers = new BrowserPool();
const TEST_INPUT = { input: { mode: 'echo', prompt: 'from test_input.json' } };

beforeAll(async () => {
  fixture = await startDashboardFixture({ testInput: TEST_INPUT });
}, 60_000);

afterAll(async () => {
  await browsers.close();
  await fixture?.close();
});

describe('/docs in a browser', () => {
  it('asks for the key instead of a raw 401, then tries /run from the test input with the key', async () => {
    const { context, page } = await browsers.open('docs');
    const answer = await page.goto(`${fixture.server.url}/docs`);
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

  it('is linked from the dashboard, and the key given there serves it', async () => {
    const { context, page } = await browsers.open('docs-link');
    await logIn(page, fixture.uiUrl);
    await page.locator('[data-test=docs-link]').click();
    await page.locator('.swagger-ui .info').waitFor(WAIT);
    expect(await page.locator('#docs-api-key').count()).toBe(0);
    await context.close();
  });
});
