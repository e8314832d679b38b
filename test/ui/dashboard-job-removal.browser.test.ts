/**
 * When a job's page says it will be gone (issue 48 item 4), in headless Chromium against a
 * harness of our own (dashboard-fixture.ts): a finished /runsync job is removed 1 min after
 * it ended (its retention), not at its ttl a day later; a finished /run job 30 min after;
 * a job still queued at its ttl at the latest, with its retention to come said beside it.
 */
import { describe, expect, it } from 'vitest';
import { API_KEY, ENDPOINT } from './dashboard-fixture.js';
import { WAIT, logIn, useDashboardFile } from './dashboard-page.js';

const dashboard = useDashboardFile();
const auth = { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' };

const MINUTE = 60_000;

async function removalShown(endpointId: string, jobId: string): Promise<{ at: number; text: string }> {
  const { context, page } = await dashboard.browsers.open(`removal-${jobId}`);
  try {
    await logIn(page, dashboard.fixture.uiUrl);
    await page.goto(`${dashboard.fixture.uiUrl}#/endpoint/${endpointId}/job/${jobId}`);
    const removal = page.locator('[data-test=job-removal]');
    await removal.waitFor(WAIT);
    const at = Date.parse((await removal.locator('time').getAttribute('datetime')) ?? '');
    return { at, text: (await removal.textContent()) ?? '' };
  } finally {
    await context.close();
  }
}

describe("when a job's page says it will be gone", () => {
  it('a finished /runsync job: 1 min after it ended (its retention), not at its ttl', async () => {
    const response = await fetch(`${dashboard.fixture.server.url}/v2/${ENDPOINT}/runsync`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ input: { mode: 'echo' } }),
    });
    const answer = (await response.json()) as { id: string; status: string };
    expect(answer.status).toBe('COMPLETED');
    const job = await dashboard.fixture.harness.endpoint(ENDPOINT).find(answer.id);
    const shown = await removalShown(ENDPOINT, answer.id);
    expect(shown.at).toBe((job?.endedAt ?? 0) + MINUTE);
    expect(shown.text).toContain('its retention: kept 1 min after it ended, as a /runsync job is');
  });

  it('a finished /run job: 30 min after it ended', async () => {
    const endpoint = dashboard.fixture.harness.endpoint(ENDPOINT);
    const { id } = await endpoint.submit({ input: { mode: 'echo' } });
    const ended = await endpoint.waitForEnd(id, 20_000);
    const job = await endpoint.find(id);
    expect(ended.status).toBe('COMPLETED');
    const shown = await removalShown(ENDPOINT, id);
    expect(shown.at).toBe((job?.endedAt ?? 0) + 30 * MINUTE);
    expect(shown.text).toContain('kept 30 min after it ended, as a /run job is');
  });

  it('a queued job: at its ttl at the latest, its retention to come said beside it', async () => {
    const endpoint = dashboard.fixture.harness.endpoint('removal-queued');
    const { id } = await endpoint.submit({ input: {}, policy: { ttl: 10 * MINUTE } });
    const job = await endpoint.find(id);
    const shown = await removalShown('removal-queued', id);
    expect(shown.at).toBe(job?.expiresAt);
    expect(shown.text).toContain('at the latest (its ttl)');
    expect(shown.text).toContain('once it ends it is kept 30 min after it ends (the retention of a /run job), whichever comes first');
  });
});
