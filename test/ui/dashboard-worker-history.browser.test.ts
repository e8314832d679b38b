/**
 * Who was connected once no worker is (issue 48 item 5), in headless Chromium against a
 * harness of our own (dashboard-fixture.ts): the fixture's worker runs jobs and then stops
 * (as launched workers do when they scale to 0); the Workers page says no worker is
 * connected now, that one was, with the jobs done and when it was last heard from, and
 * lists it among the workers that left. The overview's JSON carries the same history.
 */
import { describe, expect, it } from 'vitest';
import { API_KEY, ENDPOINT } from './dashboard-fixture.js';
import { WAIT, logIn, useDashboardFile } from './dashboard-page.js';

const dashboard = useDashboardFile();

interface Departed {
  id: string;
  endpointId: string;
  firstSeenAt: string;
  lastSeenAt: string;
  jobsDone: number;
}

describe('workers that left', () => {
  it('says who was connected and when last, with the jobs each did, once no worker is', async () => {
    const endpoint = dashboard.fixture.harness.endpoint(ENDPOINT);
    for (let i = 0; i < 3; i++) {
      const { id } = await endpoint.submit({ input: { mode: 'echo', i } });
      await endpoint.waitForEnd(id, 20_000);
    }
    const workerId = dashboard.fixture.worker.transport.workerId;
    const { context, page } = await dashboard.browsers.open('worker-history');
    await logIn(page, dashboard.fixture.uiUrl);
    await page.goto(`${dashboard.fixture.uiUrl}#/workers`);
    const row = page.locator('[data-test=worker-row]', { hasText: workerId });
    await row.waitFor(WAIT);
    expect(await row.locator('td').last().textContent()).toBe('3');

    await dashboard.fixture.worker.stop();
    const none = page.locator('[data-test=no-workers]');
    await none.filter({ hasText: 'No worker is connected now' }).waitFor(WAIT);
    expect(await none.textContent()).toMatch(new RegExp(`1 worker was connected\\s+\\(3 jobs done\\); the last, ${workerId}, was heard from .* ago\\.`));
    const departed = page.locator('[data-test=departed-row]');
    expect(await departed.count()).toBe(1);
    expect(await departed.first().textContent()).toContain(workerId);
    expect(await departed.first().locator('[data-test=departed-jobs]').textContent()).toBe('3');
    await context.close();

    const overview = (await (await fetch(`${dashboard.fixture.server.url}/ui/api/overview`, { headers: { authorization: `Bearer ${API_KEY}` } })).json()) as {
      workers: unknown[];
      departedWorkers: Departed[];
    };
    expect(overview.workers).toEqual([]);
    expect(overview.departedWorkers).toEqual([expect.objectContaining({ id: workerId, endpointId: ENDPOINT, jobsDone: 3 })]);
    const [gone] = overview.departedWorkers;
    expect(Date.parse(gone?.lastSeenAt ?? '')).toBeGreaterThanOrEqual(Date.parse(gone?.firstSeenAt ?? ''));
  });
});
