/**
 * A job's own log lines outlive the endpoint's ring (issue 32 item 9), with a real
 * launched worker process: the endpoint keeps its last `logLines` lines (20 here; 1 000
 * by default), and jobs after the first push the first job's lines out of it. The job
 * page's lines (GET /ui/api/logs?job=) still show the first job's lines (they used to
 * be empty: "No line for this job (yet)").
 */
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../../kit/index.js';
import { startLauncherHarness, type LauncherHarness } from './launcher-setup.js';

let running: LauncherHarness | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
}, 60_000);

describe("a job's lines past the endpoint's ring", () => {
  it('are shown on the job page after later jobs pushed them out of the last lines', { timeout: 180_000 }, async () => {
    running = await startLauncherHarness({ logLines: 20 });
    const h = running;
    const endpoint = await h.createEndpoint({ workersMin: 0, workersMax: 1 });
    const first = await h.run(endpoint.id, { ms: 0 });
    await waitFor(async () => (await h.status(endpoint.id, first)).status === 'COMPLETED', 'the first job COMPLETED', 120_000, 50);
    const ownLines = async () =>
      (await h.json<{ lines: Array<{ line: string }>; dropped?: string }>('GET', `/ui/api/logs?endpoint=${endpoint.id}&job=${first}&max=500`)).lines;
    await waitFor(async () => (await ownLines()).length > 0, "the first job's lines on its page", 30_000, 50);
    const before = (await ownLines()).length;
    // Later jobs, until none of the first job's lines is among the endpoint's last 20.
    for (let round = 0; round < 40; round++) {
      const id = await h.run(endpoint.id, { ms: 0 });
      await waitFor(async () => (await h.status(endpoint.id, id)).status === 'COMPLETED', 'a later job COMPLETED', 60_000, 20);
      if (!(await h.logs(endpoint.id)).some((line) => line.line.includes(first))) break;
    }
    expect((await h.logs(endpoint.id)).some((line) => line.line.includes(first))).toBe(false);
    const after = await ownLines();
    expect(after.length).toBe(before);
    expect(after.every((line) => line.line.includes(first))).toBe(true);
  });
});
