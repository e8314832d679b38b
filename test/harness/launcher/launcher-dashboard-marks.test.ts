/**
 * The dashboard's workers say which ones this harness launched: a worker the launcher
 * started (a real process) is `launched: true`; one that joined by hand over the worker
 * API (as a worker a killed harness left behind would) is `launched: false`, shown
 * "not launched here".
 */
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../../kit/index.js';
import { startLauncherHarness, type LauncherHarness } from './launcher-setup.js';

let h: LauncherHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

interface WorkerRowView {
  id: string;
  endpointId: string;
  launched?: boolean;
}

describe('the dashboard marks workers this harness did not launch', () => {
  it('launched: true for its own worker, false for one that joined by hand', async () => {
    h = await startLauncherHarness();
    const endpoint = await h.createEndpoint({ workersMin: 1, workersMax: 1 });
    const own = `${endpoint.id}-1`;
    await waitFor(
      async () => (await h?.launcher.pods())?.some((pod) => pod.id === own && pod.desiredStatus === 'RUNNING'),
      'the launched worker runs',
      60_000,
      100,
    );
    // A stranger's heartbeat: the job store now knows a worker no launcher here started.
    const ping = await fetch(`${h.server.url}/v2/${endpoint.id}/ping/stranger-1`);
    expect(ping.status).toBeLessThan(300);
    const rows = await waitFor(
      async () => {
        const overview = (await (await fetch(`${h?.server.url}/ui/api/overview`)).json()) as { workers: WorkerRowView[] };
        const ids = overview.workers.map((row) => row.id);
        return ids.includes(own) && ids.includes('stranger-1') ? overview.workers : undefined;
      },
      'both workers in the dashboard',
      60_000,
      100,
    );
    expect(rows.find((row) => row.id === own)?.launched).toBe(true);
    expect(rows.find((row) => row.id === 'stranger-1')?.launched).toBe(false);
  }, 120_000);
});
