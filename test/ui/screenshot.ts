/**
 * @module test/ui/screenshot
 * `npm run screenshot`: the README's pictures of the dashboard, made by a script and
 * not by hand. Starts the test fixture (a harness with an in-process worker on port 0),
 * runs a few hundred jobs of each kind through it for ~15 s so that the charts have
 * points, then writes docs/dashboard.png (the endpoints view with its charts) and
 * docs/dashboard-job.png (a streaming job's page) with headless Chromium.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { API_KEY, ENDPOINT, launchChromium, startDashboardFixture } from './dashboard-fixture.js';

const OUT = join(process.cwd(), 'docs');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const fixture = await startDashboardFixture({ concurrency: 16 });
const browser = await launchChromium();
try {
  const endpoint = fixture.harness.endpoint(ENDPOINT);
  const context = await browser.newContext({ viewport: { width: 1280, height: 1000 }, colorScheme: 'light' });
  const page = await context.newPage();
  await page.goto(fixture.uiUrl);
  await page.locator('#api-key').fill(API_KEY);
  await page.locator('#api-key').press('Enter');
  await page.locator('[data-test=endpoints]').waitFor({ timeout: 20_000 });
  // Traffic while the page is open: echo jobs at a varying rate, some failures, a slow tail.
  for (let second = 0; second < 15; second++) {
    const batch = 20 + Math.round(15 * Math.sin(second / 2));
    for (let i = 0; i < batch; i++) await endpoint.submit({ input: { mode: i % 17 === 0 ? 'fail-once' : 'sleep', ms: 20 + ((i * 37) % 180) } });
    await sleep(1_000);
  }
  for (let i = 0; i < 6; i++) await endpoint.submit({ input: { mode: 'sleep', ms: 60_000 } });
  const queued = fixture.harness.endpoint('batch');
  for (let i = 0; i < 42; i++) queued.submit({ input: { i } });
  await sleep(1_500);
  mkdirSync(OUT, { recursive: true });
  await page.screenshot({ path: join(OUT, 'dashboard.png'), fullPage: true });

  const tokens = 'The harness shows each token of a streaming job as the worker yields it, in order.'.split(/(?<= )/);
  await page.locator('#submit-json').fill(JSON.stringify({ input: { mode: 'stream', tokens, delayMs: 120 } }, null, 2));
  await page.locator('[data-test=submit]').click();
  await page.locator('[data-test=stream-text]').waitFor({ timeout: 20_000 });
  await sleep(1_200);
  await page.screenshot({ path: join(OUT, 'dashboard-job.png'), fullPage: true });
  for (const job of await endpoint.jobs()) if (job.status === 'IN_PROGRESS' || job.status === 'IN_QUEUE') await endpoint.cancel(job.id);
  console.log(`wrote ${join(OUT, 'dashboard.png')} and ${join(OUT, 'dashboard-job.png')}`);
} finally {
  await browser.close();
  await fixture.close();
}
