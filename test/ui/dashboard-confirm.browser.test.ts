/**
 * What an action asks and what it says it did (issue 48 item 6), in headless Chromium against
 * a harness of our own (dashboard-fixture.ts): a bulk action's outcome is coloured by how it
 * went (every job changed, some refused, all refused) with the refused jobs grouped by reason;
 * the confirms name the endpoint by its name beside its id; a single job's cancel and rerun
 * ask before they act, and a dismissed confirm changes nothing.
 */
import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { fetchOkJson } from '../kit/index.js';
import { API_KEY, CRASH_IMAGE, ENDPOINT } from './dashboard-fixture.js';
import { WAIT, logIn, useDashboardFile } from './dashboard-page.js';

const dashboard = useDashboardFile();
const auth = { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' };

function v1<T>(method: string, path: string, body?: unknown): Promise<T> {
  return fetchOkJson<T>(`${dashboard.fixture.server.url}/v1${path}`, method, body, auth);
}

/** Answers each confirm with `answer()` and keeps its text. */
function confirms(page: Page, answer: () => boolean): string[] {
  const seen: string[] = [];
  page.on('dialog', (dialog) => {
    seen.push(dialog.message());
    void (answer() ? dialog.accept() : dialog.dismiss());
  });
  return seen;
}

describe('what an action asks and what it says it did', () => {
  it('colours a bulk outcome by how it went, groups the refused by reason, and names the endpoint in the confirm', async () => {
    // A named endpoint with no worker (workersMax 0): its jobs stay queued.
    const template = await v1<{ id: string }>('POST', '/templates', { name: 'confirm-none', imageName: CRASH_IMAGE, isServerless: true, category: 'CPU' });
    const endpoint = await v1<{ id: string }>('POST', '/endpoints', { name: 'thumbnailer', templateId: template.id, workersMin: 0, workersMax: 0 });
    try {
      const jobs = dashboard.fixture.harness.endpoint(endpoint.id);
      for (let i = 0; i < 3; i++) await jobs.submit({ input: { i } });
      const { context, page } = await dashboard.browsers.open('bulk-outcome');
      const seen = confirms(page, () => true);
      await logIn(page, dashboard.fixture.uiUrl);
      await page.goto(`${dashboard.fixture.uiUrl}#/endpoint/${endpoint.id}`);
      const info = page.locator('[data-test=page-info]');
      await info.filter({ hasText: '1–3 of 3' }).waitFor(WAIT);
      const outcome = page.locator('[data-test=bulk-outcome]');

      // Every job changed: success.
      await page.locator('[data-test=select-all]').check();
      await page.locator('[data-test=bulk-cancel]').click();
      await outcome.filter({ hasText: 'Cancelled 3 of 3' }).waitFor(WAIT);
      expect(await outcome.getAttribute('data-outcome')).toBe('success');
      expect(await outcome.getAttribute('class')).toContain('notice');
      expect(seen[0]).toBe(`Cancel 3 jobs selected on endpoint thumbnailer (${endpoint.id})?`);

      // Every job refused (a cancelled job cannot be retried): error, the three refusals one line of one reason.
      await info.filter({ hasText: '1–3 of 3' }).waitFor(WAIT);
      await page.locator('[data-test=select-all]').check();
      await page.locator('[data-test=bulk-retry]').click();
      await outcome.filter({ hasText: 'Retried 0 of 3' }).waitFor(WAIT);
      expect(await outcome.getAttribute('data-outcome')).toBe('failure');
      expect(await outcome.getAttribute('class')).toContain('error');
      const groups = outcome.locator('[data-test=refused-group]');
      expect(await groups.count()).toBe(1);
      expect(await groups.first().textContent()).toMatch(/^SW_RETRY_NOT_ALLOWED × 3: /);

      // Some refused: warning. A FAILED job (this test takes it as a worker would) can be retried.
      const { id: failing } = await jobs.submit({ input: { i: 3 } });
      const [taken] = await jobs.tryTake('confirm-test-worker', 1);
      expect(taken?.id).toBe(failing);
      await jobs.complete(failing, 'confirm-test-worker', {
        kind: 'error',
        error: { error_type: 'Error', error_message: 'made to fail', hostname: 'test', worker_id: 'confirm-test-worker', runtime_version: 'test' },
      });
      await info.filter({ hasText: '1–4 of 4' }).waitFor(WAIT);
      await page.locator('[data-test=select-all]').check();
      await page.locator('[data-test=bulk-retry]').click();
      await outcome.filter({ hasText: 'Retried 1 of 4' }).waitFor(WAIT);
      expect(await outcome.getAttribute('data-outcome')).toBe('partial');
      expect(await outcome.getAttribute('class')).toContain('warning');
      expect(await outcome.textContent()).toContain('3 refused');

      // The purge confirm names the endpoint too.
      await page.locator('[data-test=purge]').click();
      await expect
        .poll(() => seen.at(-1), WAIT)
        .toMatch(new RegExp(`^Remove every queued job of endpoint thumbnailer \\(${endpoint.id}\\) \\(\\d+ now\\)\\?$`));
      await context.close();
    } finally {
      await v1('DELETE', `/endpoints/${endpoint.id}`);
    }
  });

  it("asks before a single job's cancel and rerun, naming the endpoint; a dismissed confirm changes nothing", async () => {
    const endpoint = dashboard.fixture.harness.endpoint(ENDPOINT);
    const { id } = await endpoint.submit({ input: { mode: 'sleep', ms: 60_000 } });
    const { context, page } = await dashboard.browsers.open('single-confirm');
    let accept = false;
    const seen = confirms(page, () => accept);
    await logIn(page, dashboard.fixture.uiUrl);
    await page.goto(`${dashboard.fixture.uiUrl}#/endpoint/${ENDPOINT}/job/${id}`);
    const status = page.locator('h1 [data-test=status]');
    await status.filter({ hasText: 'IN_PROGRESS' }).waitFor(WAIT);
    await page.locator('[data-test=cancel]').click();
    await expect.poll(() => seen.length, WAIT).toBe(1);
    expect(seen[0]).toBe(`Cancel job ${id} (IN_PROGRESS) on endpoint ${ENDPOINT}?`);
    expect((await endpoint.find(id))?.status).toBe('IN_PROGRESS');
    accept = true;
    await page.locator('[data-test=cancel]').click();
    await status.filter({ hasText: 'CANCELLED' }).waitFor(WAIT);

    // Rerun as is: dismissed, no new job; accepted, the new job's page.
    accept = false;
    await page.locator('[data-test=rerun-as-is]').click();
    await expect.poll(() => seen.length, WAIT).toBe(3);
    expect(seen[2]).toMatch(new RegExp(`^Submit a new job on endpoint ${ENDPOINT} with the input of ${id} `));
    expect(new URL(page.url()).hash).toContain(id);
    accept = true;
    await page.locator('[data-test=rerun-as-is]').click();
    await page.waitForURL((url) => url.hash.includes('/job/') && !url.hash.endsWith(id), WAIT);

    // Rerun with edited input asks too, at its submit.
    const rerunId = decodeURIComponent(new URL(page.url()).hash.split('/job/')[1] ?? '');
    await page.locator('[data-test=rerun-open]').click();
    accept = false;
    await page.locator('[data-test=rerun]').click();
    await expect.poll(() => seen.length, WAIT).toBe(5);
    expect(seen[4]).toBe(`Submit a new job on endpoint ${ENDPOINT} with the edited input of ${rerunId}?`);
    expect(new URL(page.url()).hash).toContain(rerunId);
    await endpoint.cancel(rerunId).catch(() => {});
    await context.close();
  });
});
