/**
 * @module test/ui/screenshot
 * `npm run screenshot`: the README's pictures of the dashboard, made by a script and
 * not by hand. Starts the test fixture (a harness with an in-process worker on port 0),
 * runs a few hundred jobs of each kind through it for ~15 s so that the charts have
 * points, with a load-balancing pool (a worker answering /ping on port 0, and one that
 * cannot be reached) and an endpoint whose worker command keeps crashing under the
 * launcher (an ImportError on stderr), then writes docs/dashboard.png (the endpoints view with its panels and charts),
 * docs/dashboard-job.png (a streaming job's page) and docs/dashboard-workers.png (the
 * workers view with the launcher's scale events of a worker command that keeps
 * crashing) with headless Chromium.
 */
import { mkdirSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fetchOkJson } from '../kit/index.js';
import { API_KEY, ENDPOINT, IMPORT_ERROR_IMAGE, launchChromium, startDashboardFixture } from './dashboard-fixture.js';

const OUT = join(process.cwd(), 'docs');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const fixture = await startDashboardFixture({ concurrency: 16 });
const browser = await launchChromium();
// A load-balancing worker: /ping answers 200 (healthy), every other path a small JSON.
const lbWorker = createServer((request, response) => {
  response.setHeader('content-type', 'application/json');
  response.end(request.url === '/ping' ? '{"status":"ok"}' : '{"text":"hello"}');
});
await new Promise<void>((resolve) => lbWorker.listen(0, '127.0.0.1', resolve));
try {
  const auth = { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' };
  const v1 = (method: string, path: string, body?: unknown): Promise<{ id: string }> => fetchOkJson(`${fixture.server.url}/v1${path}`, method, body, auth);
  const lbUrl = `http://127.0.0.1:${(lbWorker.address() as AddressInfo).port}`;
  for (const [workerId, url] of [
    ['lb-worker-1', lbUrl],
    ['lb-worker-2', 'http://127.0.0.1:9'],
  ] as const) {
    const registered = await fetch(`${fixture.server.url}/v2/chat/load-balancing/workers`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ url, workerId, concurrency: 8 }),
    });
    if (!registered.ok) throw new Error(`registering ${workerId}: ${registered.status} ${await registered.text()}`);
  }
  // The launcher's scale events: an endpoint whose worker command fails at once on a missing library (its stderr shows with each crash).
  const template = await v1('POST', '/templates', { name: 'crashing', imageName: IMPORT_ERROR_IMAGE, isServerless: true, category: 'CPU' });
  const crashing = await v1('POST', '/endpoints', { name: 'crashing', templateId: template.id, workersMin: 1, workersMax: 1 });
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
    await fetch(`${fixture.server.url}/lb/chat/generate`, { method: 'POST', headers: auth, body: '{}' })
      .then((answer) => answer.text())
      .catch(() => '');
    await sleep(1_000);
  }
  for (let i = 0; i < 6; i++) await endpoint.submit({ input: { mode: 'sleep', ms: 60_000 } });
  const queued = fixture.harness.endpoint('batch');
  for (let i = 0; i < 42; i++) await queued.submit({ input: { i } });
  await sleep(1_500);
  mkdirSync(OUT, { recursive: true });
  await page.screenshot({ path: join(OUT, 'dashboard.png'), fullPage: true });

  const tokens = 'The harness shows each token of a streaming job as the worker yields it, in order.'.split(/(?<= )/);
  await page.locator('#submit-endpoint').fill(ENDPOINT);
  await page.locator('#submit-json').fill(JSON.stringify({ input: { mode: 'stream', tokens, delayMs: 120 } }, null, 2));
  await page.locator('[data-test=submit]').click();
  await page.locator('[data-test=stream-text]').waitFor({ timeout: 20_000 });
  await sleep(1_200);
  await page.screenshot({ path: join(OUT, 'dashboard-job.png'), fullPage: true });
  for (const job of await endpoint.jobs()) if (job.status === 'IN_PROGRESS' || job.status === 'IN_QUEUE') await endpoint.cancel(job.id);

  await page.locator('header nav a', { hasText: 'Workers' }).click();
  await sleep(2_000);
  await page.screenshot({ path: join(OUT, 'dashboard-workers.png'), fullPage: true });
  await v1('DELETE', `/endpoints/${crashing.id}`);
  console.log(`wrote ${join(OUT, 'dashboard.png')}, ${join(OUT, 'dashboard-job.png')} and ${join(OUT, 'dashboard-workers.png')}`);
} finally {
  await browser.close();
  await fixture.close();
  lbWorker.closeAllConnections();
  await new Promise((resolve) => lbWorker.close(resolve));
}
