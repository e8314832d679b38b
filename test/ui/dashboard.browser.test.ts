/**
 * The dashboard in a real browser: headless Chromium (test/setup/chromium.ts) driven by
 * playwright-core against a harness of our own on 127.0.0.1 port 0, with an API key
 * and an in-process worker (dashboard-fixture.ts). It logs in with the key (a wrong
 * key shows the API's error), submits from the page and sees COMPLETED with the
 * output, watches a streaming job's tokens arrive in order while it runs, sees a job's
 * progress output and its webhook delivery pushed live, shows a job's GPU summary (a
 * sampler with a scripted reader), cancels a
 * running job, retries a failed one (its attempts listed), shows the attempts of a job
 * whose worker was lost (worker API calls from the test), the launcher's scale events
 * of a crashing worker command, prefills the form from an input schema and lists the
 * schema's issues as the API gives them, and pages through 3 000 jobs. A failing test
 * leaves a screenshot of the page in test-artifacts/. Chromium missing: every test
 * fails with how to install it (none is skipped).
 */
import { mkdirSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import * as z from 'zod';
import { createGpuSampler } from '../../src/gpu/index.js';
import { toDocumentSchema } from '../../packages/platform/src/harness/openapi/index.js';
import { validateInput } from '../../src/worker/input-check.js';
import { fetchOkJson } from '../kit/index.js';
import { API_KEY, CRASH_IMAGE, ENDPOINT, launchChromium, startDashboardFixture, type DashboardFixture } from './dashboard-fixture.js';

const ARTIFACTS = join(process.cwd(), 'test-artifacts');
const WAIT = { timeout: 20_000 };

let fixture: DashboardFixture;
let launching: Promise<Browser> | undefined;

beforeAll(async () => {
  fixture = await startDashboardFixture();
}, 60_000);

afterAll(async () => {
  await launching?.then((browser) => browser.close()).catch(() => {});
  await fixture?.close();
});

/** The browser, launched on first use: without Chromium every test fails with how to install it (none is skipped). */
function getBrowser(): Promise<Browser> {
  launching ??= launchChromium();
  return launching;
}

/** A fresh browser context and page; on failure its screenshot goes to test-artifacts/. */
async function openPage(name: string): Promise<{ context: BrowserContext; page: Page }> {
  const context = await (await getBrowser()).newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  onTestFailed(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, `dashboard-${name}.png`), fullPage: true }).catch(() => {});
    if (errors.length > 0) console.log(`page errors in ${name}:`, errors);
  });
  return { context, page };
}

/** Open /ui (of `uiUrl`, default the fixture's) and log in by keyboard: the key, then Enter. */
async function logIn(page: Page, key = API_KEY, uiUrl = fixture.uiUrl): Promise<void> {
  await page.goto(uiUrl);
  await page.locator('#api-key').fill(key);
  await page.locator('#api-key').press('Enter');
}

/** Submit `request` from the page's JSON editor; answers the new job's id (from the job page it opens). */
async function submitFromPage(page: Page, request: unknown): Promise<string> {
  await page.locator('#submit-json').fill(JSON.stringify(request));
  await page.locator('[data-test=submit]').click();
  await page.waitForURL(/#\/endpoint\/[^/]+\/job\//, WAIT);
  const id = await page.locator('[data-test=job-id]').textContent(WAIT);
  expect(id).toBeTruthy();
  return id ?? '';
}

const jobStatus = (page: Page) => page.locator('h1 [data-test=status]');

describe('dashboard in Chromium', () => {
  it('a wrong key shows the API error and keeps the login form; the right key opens the endpoints view', async () => {
    const { context, page } = await openPage('login');
    await logIn(page, 'not-the-key');
    await expect(page.locator('[data-test=error]').textContent(WAIT)).resolves.toContain('Wrong API key');
    expect(await page.locator('[data-test=error]').textContent()).toContain('SW_UNAUTHORIZED');
    await page.locator('#api-key').fill(API_KEY);
    await page.locator('#api-key').press('Enter');
    await page.locator('[data-test=endpoints]').waitFor(WAIT);
    // The key stays in session storage, never in the URL.
    expect(page.url()).not.toContain(API_KEY);
    expect(await page.evaluate('Object.values(sessionStorage)')).toContain(API_KEY);
    await context.close();
  });

  it('loads nothing from outside the harness, works by keyboard, and follows a dark scheme', async () => {
    const context = await (await getBrowser()).newContext({ viewport: { width: 1280, height: 900 }, colorScheme: 'dark' });
    const page = await context.newPage();
    onTestFailed(async () => {
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: join(ARTIFACTS, 'dashboard-keyboard.png'), fullPage: true }).catch(() => {});
    });
    const origins = new Set<string>();
    page.on('request', (request) => origins.add(new URL(request.url()).origin));
    await logIn(page);
    await page.locator('[data-test=endpoints]').waitFor(WAIT);
    // Offline: every request went to the harness itself (no CDN).
    expect([...origins]).toEqual([new URL(fixture.server.url).origin]);
    const background = await page.evaluate('getComputedStyle(document.body).backgroundColor');
    expect(background).toBe('rgb(15, 19, 24)');
    // Keyboard: Tab from the top reaches the first endpoint's link; Enter opens its jobs.
    let focused = '';
    for (let i = 0; i < 12 && focused !== `#/endpoint/${ENDPOINT}`; i++) {
      await page.keyboard.press('Tab');
      focused = String(await page.evaluate('document.activeElement?.getAttribute("href") ?? ""'));
    }
    expect(focused).toBe(`#/endpoint/${ENDPOINT}`);
    await page.keyboard.press('Enter');
    await page.locator('[data-test=page-info]').waitFor(WAIT);
    expect(page.url()).toContain(`#/endpoint/${ENDPOINT}`);
    await page.locator('[data-test=scheme]').focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => page.evaluate('getComputedStyle(document.body).backgroundColor')).toBe('rgb(255, 255, 255)');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.evaluate('getComputedStyle(document.body).backgroundColor')).toBe('rgb(15, 19, 24)');
    expect(await page.evaluate('document.documentElement.dataset.scheme')).toBe('dark');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.evaluate('document.documentElement.dataset.scheme')).toBe('auto');
    await context.close();
  });

  it('submits the prefilled test input from the page and shows COMPLETED with its output', async () => {
    const { context, page } = await openPage('submit');
    await logIn(page);
    const prefilled = await page.locator('#submit-json').inputValue(WAIT);
    expect(JSON.parse(prefilled)).toEqual({ input: { mode: 'echo', prompt: 'hello' } });
    await page.locator('#submit-json').fill(JSON.stringify({ input: { mode: 'echo', note: 'from the page' } }));
    await page.locator('#submit-json').press('Control+Enter');
    await page.waitForURL(/#\/endpoint\/local\/job\//, WAIT);
    await expect(jobStatus(page).filter({ hasText: 'COMPLETED' }).waitFor(WAIT)).resolves.toBeUndefined();
    const output = JSON.parse((await page.locator('[data-test=job-output]').textContent()) ?? 'null') as unknown;
    expect(output).toEqual({ echo: { mode: 'echo', note: 'from the page' } });
    expect(await page.locator('[data-test=execution-time]').textContent()).toMatch(/\d+ (ms|s)/);
    await context.close();
  });

  it("shows a streaming job's tokens in order while it runs", async () => {
    const { context, page } = await openPage('stream');
    await logIn(page);
    const tokens = Array.from({ length: 12 }, (_, i) => `tok${i} `);
    const jobId = await submitFromPage(page, { input: { mode: 'stream', tokens, delayMs: 150 } });
    const seen: Array<{ text: string; status: string }> = [];
    const full = tokens.join('');
    const started = Date.now();
    for (;;) {
      const text =
        (await page
          .locator('[data-test=stream-text]')
          .textContent()
          .catch(() => null)) ?? '';
      const status = (await jobStatus(page).textContent()) ?? '';
      if (seen.at(-1)?.text !== text) seen.push({ text, status });
      if (status === 'COMPLETED' && text === full) break;
      if (Date.now() - started > 30_000) throw new Error(`stream did not finish: ${JSON.stringify(seen)}`);
      await page.waitForTimeout(40);
    }
    // Every state the page showed was a prefix of the final text: tokens in order, none lost.
    for (const { text } of seen) expect(full.startsWith(text)).toBe(true);
    const whileRunning = seen.filter((s) => s.status === 'IN_PROGRESS' && s.text.length > 0 && s.text.length < full.length);
    console.log(`stream ${jobId}: ${seen.length} distinct states seen, ${whileRunning.length} partial ones while IN_PROGRESS`);
    expect(whileRunning.length).toBeGreaterThan(0);
    expect(await page.locator('[data-test=chunk]').count()).toBe(tokens.length);
    await context.close();
  });

  it('shows progress output live while the job runs, and its webhook delivery once it ends, without a reload', async () => {
    const hooks: unknown[] = [];
    const receiver = createServer((request, response) => {
      let body = '';
      request.on('data', (data: Buffer) => (body += data.toString()));
      request.on('end', () => {
        hooks.push(JSON.parse(body));
        response.end('ok');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const { port } = receiver.address() as AddressInfo;
    try {
      const { context, page } = await openPage('progress');
      await logIn(page);
      const steps = 6;
      await submitFromPage(page, { input: { mode: 'progress', steps, delayMs: 400 }, webhook: `http://127.0.0.1:${port}/hook?token=secret` });
      // Every progress value the page showed while the job ran: pushed, not polled (the page never reloads).
      const seen = new Set<number>();
      const started = Date.now();
      for (;;) {
        const status = (await jobStatus(page).textContent()) ?? '';
        if (status !== 'IN_PROGRESS' && status !== 'IN_QUEUE') break;
        const text = await page
          .locator('[data-test=job-output]')
          .textContent({ timeout: 100 })
          .catch(() => null);
        if (text && status === 'IN_PROGRESS') seen.add((JSON.parse(text) as { step: number }).step);
        if (Date.now() - started > 30_000) throw new Error(`the job did not end: ${[...seen].join(', ')}`);
        await page.waitForTimeout(50);
      }
      console.log(`progress: steps seen on the page while IN_PROGRESS: ${[...seen].join(', ')} of ${steps}`);
      expect(seen.size).toBeGreaterThanOrEqual(3);
      expect([...seen]).toEqual([...seen].sort((a, b) => a - b));
      await jobStatus(page).filter({ hasText: 'COMPLETED' }).waitFor(WAIT);
      expect(JSON.parse((await page.locator('[data-test=job-output]').textContent()) ?? 'null')).toEqual({ steps });
      // The webhook delivery appears when it ends (the URL as logs show it: no query).
      const delivery = page.locator('[data-test=webhook-delivery]');
      await delivery.waitFor(WAIT);
      expect(await delivery.textContent()).toContain(`http://127.0.0.1:${port}/hook`);
      expect(await delivery.textContent()).not.toContain('secret');
      expect(await delivery.locator('[data-test=delivered]').textContent()).toBe('yes');
      // Its time in the dashboard's one format (issue 35 item 8): day, clock time, zone, age; ISO on hover.
      const deliveredAt = delivery.locator('[data-test=webhook-at]');
      expect(await deliveredAt.textContent()).toMatch(/\d{2}:\d{2}:\d{2} \S+ · \d+ (s|min) ago$/);
      expect(await deliveredAt.getAttribute('title')).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      expect(hooks).toHaveLength(1);
      await context.close();
    } finally {
      await new Promise((resolve) => receiver.close(resolve));
    }
  });

  it("shows the GPU summary of a job an in-process worker ran: the page's line and a row per card", async () => {
    // A real sampler whose reader answers one card at 40 % then 80 % (this machine may have no GPU).
    let reads = 0;
    const sampler = createGpuSampler({
      intervalMs: 100,
      reader: async () => {
        reads += 1;
        const percent = reads < 3 ? 40 : 80;
        return {
          ok: true,
          vendor: 'nvidia',
          tool: 'nvidia-smi',
          hidden: 0,
          readAt: Date.now(),
          gpus: [
            {
              vendor: 'nvidia',
              index: 0,
              uuid: 'GPU-test',
              name: 'Scripted card',
              utilizationPercent: percent,
              memoryUtilizationPercent: null,
              memoryUsedBytes: percent * 2 ** 30,
              memoryTotalBytes: 80 * 2 ** 30,
              temperatureCelsius: null,
              powerDrawWatts: null,
              powerLimitWatts: null,
              driverVersion: null,
            },
          ],
        };
      },
    });
    const withGpu = await startDashboardFixture({ gpu: sampler });
    try {
      const { context, page } = await openPage('gpu');
      await logIn(page, API_KEY, withGpu.uiUrl);
      await submitFromPage(page, { input: { mode: 'sleep', ms: 1_500 } });
      await jobStatus(page).filter({ hasText: 'COMPLETED' }).waitFor(WAIT);
      const line = page.locator('[data-test=job-gpu]');
      await line.waitFor(WAIT);
      expect(await line.textContent()).toMatch(/utilisation peak 80 %, mean \d+ %;\s+memory peak 80\.0 GiB \(\d+ readings\)/);
      const rows = page.locator('[data-test=job-gpu-cards] tbody tr');
      expect(await rows.count()).toBe(1);
      expect(await rows.first().textContent()).toContain('Scripted card');
      await context.close();
    } finally {
      await withGpu.close();
      await sampler.close();
    }
  });

  it('cancels a running job from its page: CANCELLED', async () => {
    const { context, page } = await openPage('cancel');
    page.on('dialog', (dialog) => void dialog.accept());
    await logIn(page);
    await submitFromPage(page, { input: { mode: 'sleep', ms: 60_000 } });
    await jobStatus(page).filter({ hasText: 'IN_PROGRESS' }).waitFor(WAIT);
    await page.locator('[data-test=cancel]').click();
    await jobStatus(page).filter({ hasText: 'CANCELLED' }).waitFor(WAIT);
    await expect(page.locator('[data-test=notice]').first().textContent()).resolves.toContain('CANCELLED');
    await context.close();
  });

  it('retries a failed job from its page: the error is shown with its stack folded, then it runs again and completes', async () => {
    const { context, page } = await openPage('retry');
    await logIn(page);
    await submitFromPage(page, { input: { mode: 'fail-once' } });
    await jobStatus(page).filter({ hasText: 'FAILED' }).waitFor(WAIT);
    const error = page.locator('[data-test=job-error]');
    expect(await error.textContent()).toContain('fail-once: job');
    expect(await error.locator('details').first().getAttribute('open')).toBeNull();
    await page.locator('[data-test=retry]').click();
    await jobStatus(page).filter({ hasText: 'COMPLETED' }).waitFor(WAIT);
    expect(await page.locator('[data-test=retries]').textContent()).toBe('1');
    // Both attempts listed: the first failed with its error, the second completed.
    const outcomes = page.locator('[data-test=attempt-row] [data-test=attempt-outcome]');
    await expect.poll(() => outcomes.allTextContents(), WAIT).toEqual(['failed', 'completed']);
    expect(await page.locator('[data-test=attempt-row]').first().textContent()).toContain('fail-once: job');
    expect(await page.locator('[data-test=attempts] [data-test=attempt]').textContent()).toBe('2');
    await context.close();
  });

  it('shows the attempts of a job whose worker was lost: both workers, the requeue and the refused stale result', async () => {
    const base = `${fixture.server.url}/v2/http-workers`;
    const auth = { authorization: `Bearer ${API_KEY}` };
    const post = (path: string, body: unknown) =>
      fetch(`${base}${path}`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const jobId = ((await (await post('/run', { input: { n: 1 } })).json()) as { id: string }).id;
    expect(((await (await fetch(`${base}/job-take/worker-a`, { headers: auth })).json()) as { attempt: number }).attempt).toBe(1);
    const { context, page } = await openPage('attempts');
    await logIn(page);
    await page.locator('[data-test=endpoints]').waitFor(WAIT);
    await page.goto(`${fixture.uiUrl}#/endpoint/http-workers/job/${jobId}`);
    await page.locator('[data-test=attempt-row]', { hasText: 'worker-a' }).filter({ hasText: 'running' }).waitFor(WAIT);
    // worker-a reports itself unhealthy (declared gone: its job back in the queue); worker-b takes it.
    await fetch(`${base}/ping/worker-a?status=unhealthy&check=cuda&reason=test`, { headers: auth });
    expect(((await (await fetch(`${base}/job-take/worker-b`, { headers: auth })).json()) as { attempt: number }).attempt).toBe(2);
    expect((await post(`/job-done/worker-a/${jobId}?attempt=1`, { output: 'late' })).status).toBe(409);
    expect((await post(`/job-done/worker-b/${jobId}?attempt=2`, { output: { ok: true } })).status).toBe(200);
    await jobStatus(page).filter({ hasText: 'COMPLETED' }).waitFor(WAIT);
    const rows = page.locator('[data-test=attempt-row]');
    await expect.poll(() => rows.locator('[data-test=attempt-outcome]').allTextContents(), WAIT).toEqual(['requeued', 'completed']);
    const first = (await rows.first().textContent()) ?? '';
    expect(first).toContain('worker-a');
    expect(first).toContain('declared gone (it reported itself unhealthy)');
    expect(await rows.first().locator('td').last().textContent()).toBe('1');
    expect(await rows.nth(1).textContent()).toContain('worker-b');
    expect(await page.locator('[data-test=lost]').textContent()).toBe('1');
    // A late post of attempt 1 after the end changes no status: Reload reads the attempts again.
    expect((await post(`/job-stream/worker-a/${jobId}?attempt=1`, { output: 'late chunk' })).status).toBe(409);
    await page.locator('[data-test=attempts-reload]').click();
    await expect.poll(() => rows.first().locator('td').last().textContent(), WAIT).toBe('2');
    await context.close();
  });

  it("shows the launcher's scale events of a crashing worker command: starts, crashes with their backoff, a chart of launched workers", async () => {
    const auth = { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' };
    const v1 = <T>(method: string, path: string, body?: unknown): Promise<T> => fetchOkJson<T>(`${fixture.server.url}/v1${path}`, method, body, auth);
    const template = await v1<{ id: string }>('POST', '/templates', { name: 'dashboard-crash', imageName: CRASH_IMAGE, isServerless: true, category: 'CPU' });
    const endpoint = await v1<{ id: string }>('POST', '/endpoints', { templateId: template.id, workersMin: 1, workersMax: 1 });
    try {
      const { context, page } = await openPage('scale-events');
      await logIn(page);
      await page.locator('header nav a', { hasText: 'Workers' }).click();
      const events = page.locator('[data-test=scale-event]', { hasText: endpoint.id });
      // By the event's kind (the endpoint's name, shown beside its id, says "crash" too).
      const ofKind = (kind: string) => events.filter({ has: page.locator('[data-test=scale-event-kind]', { hasText: new RegExp(`^${kind}$`) }) });
      await ofKind('crash').first().waitFor(WAIT);
      await ofKind('scale-up').first().waitFor(WAIT);
      expect(await ofKind('crash').first().textContent()).toContain('backoff: next start in');
      await page.locator('[data-test=chart-launched]').waitFor(WAIT);
      // The launcher panel on the endpoints view: its /health row for the endpoint, as a table.
      await page.locator('header nav a', { hasText: 'Endpoints' }).click();
      const health = page.locator('[data-test=panel-launcher] [data-test=launcher-endpoint]', { hasText: endpoint.id });
      await health.waitFor(WAIT);
      expect(await health.locator('td').count()).toBe(6);
      expect(await page.locator('[data-test=panel-launcher] pre').count()).toBe(0);
      await context.close();
    } finally {
      await v1('DELETE', `/endpoints/${endpoint.id}`);
    }
  });

  it('shows a load-balancing pool as a table: the worker, its state, requests in flight against its concurrency', async () => {
    const registered = await fetch(`${fixture.server.url}/v2/lb-dash/load-balancing/workers`, {
      method: 'POST',
      headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
      // Nothing listens there: the worker stays out of the healthy pool, and its row says so.
      body: JSON.stringify({ url: 'http://127.0.0.1:9', workerId: 'lb-dash-1' }),
    });
    expect(registered.status).toBeLessThan(300);
    const { context, page } = await openPage('lb-panel');
    await logIn(page);
    const panel = page.locator('[data-test=panel-load-balancing]');
    const row = panel.locator('[data-test=lb-worker]', { hasText: 'lb-dash-1' });
    await row.waitFor(WAIT);
    expect(await panel.locator('[data-test=lb-pool] caption').first().textContent()).toMatch(
      /^lb-dash: \d+ idle, \d+ running, \d+ initializing, \d+ unhealthy$/,
    );
    expect(await row.locator('.badge').textContent()).toMatch(/^(initializing|unhealthy)$/);
    expect(await row.textContent()).toContain('http://127.0.0.1:9');
    expect(await panel.locator('pre').count()).toBe(0);
    await context.close();
  });

  it("prefills the form from the worker's input schema when there is no test input, and lists the schema's issues the API answers", async () => {
    const schema = z.object({ mode: z.enum(['echo', 'stream']), prompt: z.string().min(1) });
    const typed = await startDashboardFixture({
      testInput: null,
      endpointInputs: { [ENDPOINT]: { jsonSchema: toDocumentSchema(schema), check: (input) => validateInput(schema, input) } },
    });
    try {
      const { context, page } = await openPage('schema');
      await logIn(page, API_KEY, typed.uiUrl);
      await page.locator('[data-test=example-source]').waitFor(WAIT);
      expect(await page.locator('[data-test=example-source]').textContent()).toContain('input schema');
      expect(JSON.parse(await page.locator('#submit-json').inputValue())).toEqual({ input: { mode: 'echo', prompt: 'example prompt' } });
      await page.locator('#submit-json').fill(JSON.stringify({ input: { mode: 'shout' } }));
      await page.locator('[data-test=submit]').click();
      const issues = page.locator('form.submit [data-test=error-issues] li');
      await issues.first().waitFor(WAIT);
      expect(await page.locator('form.submit [data-test=error]').textContent()).toContain('SW_INPUT_VALIDATION');
      const texts = await issues.allTextContents();
      expect(texts.some((text) => text.startsWith('mode'))).toBe(true);
      expect(texts.some((text) => text.startsWith('prompt'))).toBe(true);
      await page.locator('#submit-json').fill(JSON.stringify({ input: { mode: 'echo', prompt: 'typed' } }));
      await page.locator('[data-test=submit]').click();
      await page.waitForURL(/#\/endpoint\/local\/job\//, WAIT);
      await jobStatus(page).filter({ hasText: 'COMPLETED' }).waitFor(WAIT);
      await context.close();
    } finally {
      await typed.close();
    }
  });

  it('pages through 3 000 jobs newest first, filters by state and finds one by id', async () => {
    const endpoint = fixture.harness.endpoint('bulk');
    const ids: string[] = [];
    for (let i = 0; i < 3_000; i++) ids.push((await endpoint.submit({ input: { i } })).id);
    for (const id of ids.slice(0, 5)) await endpoint.cancel(id);
    const { context, page } = await openPage('paging');
    await logIn(page);
    await page.locator('[data-test=endpoints] a', { hasText: 'bulk' }).click();
    const info = page.locator('[data-test=page-info]');
    await info.filter({ hasText: '1–50 of 3000' }).waitFor(WAIT);
    expect(await page.locator('[data-test=jobs-row]').count()).toBe(50);
    expect(await page.locator('[data-test=jobs-row] a').first().textContent()).toBe(ids.at(-1));
    for (let n = 0; n < 3; n++) await page.locator('[data-test=next]').click();
    await info.filter({ hasText: '151–200 of 3000' }).waitFor(WAIT);
    expect(await page.locator('[data-test=jobs-row] a').first().textContent()).toBe(ids.at(-151));
    await page.locator('#state-filter').selectOption('CANCELLED');
    await info.filter({ hasText: '1–5 of 5' }).waitFor(WAIT);
    await page.locator('#state-filter').selectOption('');
    await page.keyboard.press('/');
    await page.keyboard.type(ids[1234] ?? '');
    await info.filter({ hasText: '1–1 of 1' }).waitFor(WAIT);
    expect(await page.locator('[data-test=jobs-row] a').textContent()).toBe(ids[1234]);
    await context.close();
  });

  it('purges a queue from the endpoints view and shows the answer; a bad request shows the API error', async () => {
    const queued = fixture.harness.endpoint('no-workers');
    for (let i = 0; i < 7; i++) await queued.submit({ input: { i } });
    const { context, page } = await openPage('purge');
    page.on('dialog', (dialog) => void dialog.accept());
    await logIn(page);
    const row = page.locator('[data-test=endpoint-row]', { hasText: 'no-workers' });
    await row.locator('[data-test=purge]').click();
    await expect(row.locator('[data-test=notice]').textContent(WAIT)).resolves.toBe('Removed 7 queued jobs');
    expect((await queued.health()).jobs.inQueue).toBe(0);
    await page.locator('#submit-json').fill(JSON.stringify({ inputs: {} }));
    await page.locator('[data-test=submit]').click();
    const error = page.locator('form.submit [data-test=error]');
    await expect(error.textContent(WAIT)).resolves.toContain('SW_INVALID_JOB_REQUEST');
    expect(await error.textContent()).toContain('HTTP 400): Invalid job request: input is required');
    await context.close();
  });

  it(`shows the ${ENDPOINT} worker and its current job on the workers view`, async () => {
    const { context, page } = await openPage('workers');
    const job = await fixture.harness.endpoint(ENDPOINT).submit({ input: { mode: 'sleep', ms: 60_000 } });
    await logIn(page);
    await page.locator('header nav a', { hasText: 'Workers' }).click();
    await page.locator('[data-test=worker-row]', { hasText: job.id }).waitFor(WAIT);
    expect(await page.locator('[data-test=worker-row]').first().textContent()).toContain('running');
    await fixture.harness.endpoint(ENDPOINT).cancel(job.id);
    await context.close();
  });
});
