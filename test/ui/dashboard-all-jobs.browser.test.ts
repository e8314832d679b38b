/**
 * Finding and acting on jobs across endpoints (issue 35 items 7 and 9), against a harness
 * of our own (dashboard-fixture.ts): the routes over loopback HTTP (the list across
 * endpoints, merged in order and paged; what a filter matches; bulk cancel and retry with
 * what each refused), then the page in headless Chromium: #/jobs lists every endpoint's
 * jobs with the same filters, "Cancel all N" touches every job the filter matches (not
 * only the 50 rows shown) after a confirm that names N; a cancelled running job keeps its
 * worker; the key is remembered on this device only when asked; an unknown endpoint's
 * page says so; each view has its own title.
 */
import { describe, expect, it } from 'vitest';
import { API_KEY, ENDPOINT } from './dashboard-fixture.js';
import { WAIT, logIn, useDashboardFile } from './dashboard-page.js';

const dashboard = useDashboardFile();
const auth = { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' };

interface Listed {
  id: string;
  endpointId: string;
  status: string;
  submittedAt: string;
  workerId?: string;
}

async function call<T>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
  const response = await fetch(`${dashboard.fixture.server.url}${path}`, {
    method,
    headers: auth,
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return { status: response.status, body: (await response.json()) as T };
}

/** Jobs with no worker to take them (the endpoints have none): they stay IN_QUEUE. */
async function submitQueued(endpointId: string, tag: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) ids.push((await dashboard.fixture.harness.endpoint(endpointId).submit({ input: { tag, i } })).id);
  return ids;
}

describe('the list across endpoints and bulk actions: routes', () => {
  it('merges every endpoint into one list in order, pages it, and acts on exactly what the filter matches', async () => {
    const a = await submitQueued('all-a', 'merge-x', 3);
    const b = await submitQueued('all-b', 'merge-x', 2);
    const all = await call<{ total: number; jobs: Listed[]; endpointIds: string[] }>('GET', '/ui/api/jobs?text=merge-x&limit=50');
    expect(all.status).toBe(200);
    expect(all.body.total).toBe(5);
    expect(new Set(all.body.jobs.map((job) => job.id))).toEqual(new Set([...a, ...b]));
    expect(new Set(all.body.jobs.map((job) => job.endpointId))).toEqual(new Set(['all-a', 'all-b']));
    const times = all.body.jobs.map((job) => Date.parse(job.submittedAt));
    expect(times).toEqual([...times].sort((x, y) => y - x));
    // Pages of 2 read the same list, in the same order.
    const pages: Listed[] = [];
    for (const offset of [0, 2, 4]) pages.push(...(await call<{ jobs: Listed[] }>('GET', `/ui/api/jobs?text=merge-x&limit=2&offset=${offset}`)).body.jobs);
    expect(pages.map((job) => job.id)).toEqual(all.body.jobs.map((job) => job.id));
    const oldest = await call<{ jobs: Listed[] }>('GET', '/ui/api/jobs?text=merge-x&order=oldest');
    expect(oldest.body.jobs.map((job) => job.id)).toEqual([...all.body.jobs].reverse().map((job) => job.id));
    expect((await call<{ total: number }>('GET', '/ui/api/jobs?text=merge-x&endpoint=all-a')).body.total).toBe(3);

    const matching = await call<{ total: number; jobs: Array<{ endpointId: string; id: string }> }>(
      'GET',
      '/ui/api/jobs/matching?text=merge-x&endpoint=all-a,all-b',
    );
    expect(matching.body.total).toBe(5);
    expect(matching.body.jobs).toHaveLength(5);
    const cancelled = await call<{ done: number; refused: unknown[] }>('POST', '/ui/api/jobs/bulk', { action: 'cancel', jobs: matching.body.jobs });
    expect(cancelled.body).toMatchObject({ action: 'cancel', asked: 5, done: 5, refused: [] });
    for (const id of a) expect((await dashboard.fixture.harness.endpoint('all-a').find(id))?.status).toBe('CANCELLED');
    // A retry of cancelled jobs is refused, each with the API's code.
    const retried = await call<{ done: number; refused: Array<{ id: string; code: string }> }>('POST', '/ui/api/jobs/bulk', {
      action: 'retry',
      jobs: matching.body.jobs,
    });
    expect(retried.body.done).toBe(0);
    expect(retried.body.refused.map((r) => r.code)).toEqual(Array(5).fill('SW_RETRY_NOT_ALLOWED'));
  });

  it('refuses a bad bulk request or a page too deep, naming what was wrong', async () => {
    const bad = await call<{ error: { code: string; message: string } }>('POST', '/ui/api/jobs/bulk', { action: 'delete', jobs: [] });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('SW_INVALID_REQUEST');
    expect(bad.body.error.message).toContain('action must be cancel or retry');
    const deep = await call<{ error: { code: string; message: string } }>('GET', '/ui/api/jobs?offset=20000');
    expect(deep.status).toBe(400);
    expect(deep.body.error.message).toContain('offset must be at most 10000');
    const unauthorized = await fetch(`${dashboard.fixture.server.url}/ui/api/jobs`);
    expect(unauthorized.status).toBe(401);
  });

  it('keeps the worker of a cancelled running job in its record and the list', async () => {
    const endpoint = dashboard.fixture.harness.endpoint(ENDPOINT);
    const { id } = await endpoint.submit({ input: { mode: 'sleep', ms: 30_000 } });
    for (let i = 0; i < 200 && (await endpoint.find(id))?.status !== 'IN_PROGRESS'; i++) await new Promise((resolve) => setTimeout(resolve, 50));
    const worker = (await endpoint.find(id))?.workerId;
    expect(worker).toBeDefined();
    expect((await call('POST', `/v2/${ENDPOINT}/cancel/${id}`)).status).toBe(200);
    const detail = await call<{ status: string; workerId?: string }>('GET', `/ui/api/endpoints/${ENDPOINT}/jobs/${id}`);
    expect(detail.body).toMatchObject({ status: 'CANCELLED', workerId: worker });
    const listed = await call<{ jobs: Listed[] }>('GET', `/ui/api/jobs?q=${id}`);
    expect(listed.body.jobs[0]).toMatchObject({ id, workerId: worker });
  });
});

describe('the list across endpoints and bulk actions: the page', () => {
  it('lists every endpoint in #/jobs and cancels all the filter matches, not only the 50 rows shown, after a confirm naming the count', async () => {
    await submitQueued('page-a', 'page-y', 35);
    await submitQueued('page-b', 'page-y', 25);
    const { context, page } = await dashboard.browsers.open('all-jobs');
    await logIn(page, dashboard.fixture.uiUrl);
    await page.locator('[data-test=all-jobs-link]').click();
    await page.locator('#filter-text').fill('page-y');
    await page.locator('[data-test=page-info]', { hasText: '1–50 of 60' }).waitFor(WAIT);
    expect(await page.title()).toContain('All jobs');
    expect(new URL(page.url()).hash).toContain('text=page-y');
    const endpoints = new Set(await page.locator('[data-test=row-endpoint]').allTextContents());
    expect(endpoints).toEqual(new Set(['page-a', 'page-b']));
    // A dismissed confirm changes nothing; an accepted one touches all 60.
    const dialogs: string[] = [];
    let accept = false;
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void (accept ? dialog.accept() : dialog.dismiss());
    });
    await page.locator('[data-test=bulk-cancel-matching]').click();
    await expect.poll(() => dialogs.length, WAIT).toBe(1);
    expect(dialogs[0]).toContain('Cancel 60 jobs matching the filter');
    expect((await dashboard.fixture.harness.endpoint('page-a').list({ states: ['CANCELLED'], offset: 0, limit: 1 })).total).toBe(0);
    accept = true;
    await page.locator('[data-test=bulk-cancel-matching]').click();
    await page.locator('[data-test=bulk-outcome]', { hasText: 'Cancelled 60 of 60' }).waitFor(WAIT);
    expect(dialogs[1]).toBe('Cancel 60 jobs matching the filter on endpoints page-a, page-b?');
    expect((await dashboard.fixture.harness.endpoint('page-a').list({ states: ['CANCELLED'], offset: 0, limit: 1 })).total).toBe(35);
    expect((await dashboard.fixture.harness.endpoint('page-b').list({ states: ['CANCELLED'], offset: 0, limit: 1 })).total).toBe(25);
    // Retry is confirmed alike (and refused for cancelled jobs: one reason, said once).
    await page.locator('[data-test=bulk-retry-matching]').click();
    await page.locator('[data-test=bulk-outcome]', { hasText: 'Retried 0 of 60; 60 refused:' }).waitFor(WAIT);
    expect(dialogs[2]).toContain('Retry 60 jobs matching the filter');
    expect(await page.locator('[data-test=refused-group]').count()).toBe(1);
    expect(await page.locator('[data-test=refused-group]').textContent()).toContain('SW_RETRY_NOT_ALLOWED × 60');
    expect(await page.locator('[data-test=refused-group]').textContent()).toContain('and 55 more');
    await context.close();
  });

  it('says an endpoint it does not know is unknown, and titles each view', async () => {
    const { context, page } = await dashboard.browsers.open('unknown-endpoint');
    await logIn(page, dashboard.fixture.uiUrl);
    await page.goto(`${dashboard.fixture.uiUrl}#/endpoint/no-such-endpoint`);
    await page.locator('[data-test=unknown-endpoint]', { hasText: 'no endpoint no-such-endpoint' }).waitFor(WAIT);
    await expect.poll(() => page.title(), WAIT).toBe('no-such-endpoint jobs · serverless-worker harness');
    await page.goto(`${dashboard.fixture.uiUrl}#/workers`);
    await expect.poll(() => page.title(), WAIT).toBe('Workers · serverless-worker harness');
    await context.close();
  });

  it('remembers the key on this device only when asked', async () => {
    const { context, page } = await dashboard.browsers.open('remember');
    await logIn(page, dashboard.fixture.uiUrl);
    // Not remembered: a new tab asks again.
    const second = await context.newPage();
    await second.goto(dashboard.fixture.uiUrl);
    await second.locator('#api-key').waitFor(WAIT);
    await second.locator('#api-key').fill(API_KEY);
    await second.locator('[data-test=remember]').check();
    await second.locator('#api-key').press('Enter');
    await second.locator('header').waitFor(WAIT);
    // Remembered: a third tab opens logged in; Log out forgets it.
    const third = await context.newPage();
    await third.goto(dashboard.fixture.uiUrl);
    await third.locator('header').waitFor(WAIT);
    expect(await third.locator('#api-key').count()).toBe(0);
    await third.locator('header button', { hasText: 'Log out' }).click();
    const fourth = await context.newPage();
    await fourth.goto(dashboard.fixture.uiUrl);
    await fourth.locator('#api-key').waitFor(WAIT);
    await context.close();
  });
});
