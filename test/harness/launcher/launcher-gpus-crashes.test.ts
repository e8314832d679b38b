/**
 * GPU assignment and crash handling of the launcher, with real child processes.
 * GPUs: a fake nvidia-smi on PATH lists 4 GPUs; the harness's GPU detection reads
 * them, and an endpoint with gpuCount 2 and 3 workers wanted gets 2 workers with
 * disjoint CUDA_VISIBLE_DEVICES, the third `throttled`. Crashes: a worker command that
 * exits at once is restarted with a growing backoff (no fast loop) and the endpoint
 * is marked unhealthy in /health and in the log.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { detectGpus } from '../../../packages/platform/src/cli/harness-launcher.js';
import { FIXTURE_COMMAND, startLauncherHarness, type LauncherHarness } from './launcher-setup.js';
import { fakeToolEnv, tempDir } from '../../gpu/fake-tools.js';
import { waitFor } from '../../kit/index.js';

let running: LauncherHarness | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

/** nvidia-smi's CSV (the documented query format) for 4 GPUs. */
function fourGpuFixture(): string {
  const rows = [0, 1, 2, 3].map(
    (index) => `${index}, GPU-0000000${index}-1111-2222-3333-44444444444${index}, NVIDIA H100 80GB HBM3, 0, 0, 1024, 81559, 30, 70.00, 700.00, 550.54.15`,
  );
  const path = join(tempDir(), 'nvidia-smi.4x-h100.csv');
  writeFileSync(path, `${rows.join('\n')}\n`);
  return path;
}

describe('GPU assignment', () => {
  it('4 GPUs from a fake nvidia-smi, gpuCount 2: two workers on disjoint GPUs, the third throttled', async () => {
    const gpus = await detectGpus({ env: fakeToolEnv({ FAKE_NVIDIA_SMI_FIXTURE: fourGpuFixture() }), timeoutMs: 20_000 });
    expect(gpus?.vendor).toBe('nvidia');
    expect(gpus?.devices).toHaveLength(4);

    const command = `echo "gpus=$CUDA_VISIBLE_DEVICES"; exec ${FIXTURE_COMMAND}`;
    const h = await startLauncherHarness({ images: { 'test/gpu-worker:1': { command } }, ...(gpus ? { gpus } : {}) });
    running = h;
    const endpoint = await h.createEndpoint(
      { gpuCount: 2, gpuTypeIds: ['NVIDIA H100 80GB HBM3'], workersMin: 3, workersMax: 3 },
      { imageName: 'test/gpu-worker:1', category: 'NVIDIA' },
    );
    const health = await waitFor(
      async () => {
        const now = await h.health(endpoint.id);
        return now.workers.idle === 2 && now.workers.throttled === 1 ? now : undefined;
      },
      '2 idle workers and 1 throttled',
      120_000,
      100,
    );
    expect(health.workers).toMatchObject({ initializing: 0, idle: 2, running: 0, throttled: 1 });
    expect(await h.launcher.pods()).toHaveLength(2);

    const lists = (await h.logs(endpoint.id)).filter((entry) => entry.line.startsWith('gpus=')).map((entry) => entry.line.slice('gpus='.length).split(','));
    expect(lists).toHaveLength(2);
    for (const list of lists) expect(list).toHaveLength(2);
    const all = lists.flat();
    expect(new Set(all).size).toBe(4);
    for (const device of all) expect(gpus?.devices).toContain(device);
    expect((await h.launcher.pods()).every((pod) => pod.gpu?.count === 2 && pod.gpu.typeId === 'NVIDIA H100 80GB HBM3')).toBe(true);
    expect(h.logLines.some((line) => line.endpointId === endpoint.id && String(line.msg).includes('throttled'))).toBe(true);
    console.log(`[launcher gpus] devices per worker: ${lists.map((list) => list.join('+')).join(' | ')}; throttled ${health.workers.throttled}`);
  }, 200_000);

  it('a throttled worker starts once GPUs are freed', async () => {
    const command = `echo "gpus=$CUDA_VISIBLE_DEVICES"; exec ${FIXTURE_COMMAND}`;
    const h = await startLauncherHarness({ images: { 'test/gpu-worker:1': { command } }, gpus: { vendor: 'nvidia', devices: ['0', '1'] } });
    running = h;
    const gpuTemplate = { imageName: 'test/gpu-worker:1', category: 'NVIDIA' };
    const first = await h.createEndpoint({ gpuCount: 2, workersMin: 1, workersMax: 1, idleTimeout: 1 }, gpuTemplate);
    await waitFor(async () => (await h.health(first.id)).workers.idle === 1, 'the worker of the first endpoint idle on both GPUs', 120_000, 100);
    const second = await h.createEndpoint({ gpuCount: 1, workersMin: 1, workersMax: 1 }, gpuTemplate);
    await waitFor(async () => (await h.health(second.id)).workers.throttled === 1, 'the worker of the second endpoint throttled', 60_000, 100);
    expect((await h.launcher.pods()).filter((pod) => pod.endpointId === second.id)).toEqual([]);

    // workersMin 0 on the first endpoint: its idle worker stops and gives both GPUs back.
    const response = await fetch(`${h.server.url}/v1/endpoints/${first.id}`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ workersMin: 0 }),
    });
    expect(response.status).toBe(200);
    const health = await waitFor(
      async () => {
        const now = await h.health(second.id);
        return now.workers.idle === 1 ? now : undefined;
      },
      'the throttled worker started and idle',
      120_000,
      100,
    );
    expect(health.workers.throttled).toBe(0);
    const lines = (await h.logs(second.id)).filter((entry) => entry.line.startsWith('gpus='));
    expect(lines).toHaveLength(1);
    expect(['gpus=0', 'gpus=1']).toContain(lines[0]?.line);
    const events = h.launcher.scaleEvents(second.id).map((event) => event.kind);
    expect(events.indexOf('throttled')).toBeLessThan(events.indexOf('scale-up'));
    console.log(`[launcher gpus freed] second endpoint: ${events.join(' -> ')}; ${lines[0]?.line ?? ''}`);
  }, 200_000);

  it('a CPU endpoint on the same machine needs no GPU and sees none', async () => {
    const h = await startLauncherHarness({
      images: { 'test/cpu-worker:1': { command: `echo "gpus=[$CUDA_VISIBLE_DEVICES]"; exec ${FIXTURE_COMMAND}` } },
      gpus: { vendor: 'nvidia', devices: ['0'] },
    });
    running = h;
    const endpoint = await h.createEndpoint({ workersMin: 2, workersMax: 2 }, { imageName: 'test/cpu-worker:1', category: 'CPU' });
    await waitFor(async () => (await h.health(endpoint.id)).workers.idle === 2, '2 idle CPU workers', 120_000, 100);
    const lines = (await h.logs(endpoint.id)).filter((entry) => entry.line.startsWith('gpus='));
    expect(lines.map((entry) => entry.line)).toEqual(['gpus=[]', 'gpus=[]']);
  }, 200_000);
});

describe('crashing worker command', () => {
  it('exits at once: restarted with a growing backoff, no fast loop, endpoint unhealthy in /health and the log', async () => {
    const h = await startLauncherHarness({
      images: { 'test/crash:1': { command: 'echo "boom" >&2; exit 3' } },
      backoff: { baseMs: 200, maxMs: 1_600, unhealthyAfter: 3 },
    });
    running = h;
    const endpoint = await h.createEndpoint({ workersMin: 1, workersMax: 2 }, { imageName: 'test/crash:1' });
    const watchStarted = Date.now();
    const health = await waitFor(
      async () => {
        const now = await h.health(endpoint.id);
        return now.healthy === false ? now : undefined;
      },
      'the endpoint unhealthy',
      60_000,
      100,
    );
    expect(health.unhealthyReason).toContain('exited during start-up 3 times in a row');
    expect(health.unhealthyReason).toContain('code 3');
    // Watch until the fifth crash, past the backoff's cap (200 + 400 + 800 + 1 600 ms of waits): the backoff keeps the restarts slow.
    const crashLines = () => h.logLines.filter((line) => line.endpointId === endpoint.id && typeof line.nextStartInMs === 'number');
    await waitFor(() => crashLines().length >= 5, 'a fifth crash, after the capped wait', 60_000, 100);
    const watchedMs = Date.now() - watchStarted;
    const crashes = crashLines();
    const waits = crashes.map((line) => Number(line.nextStartInMs));
    const startLines = h.logLines.filter((line) => line.endpointId === endpoint.id && String(line.msg).startsWith('scale up'));
    const starts = startLines.length;
    // A tick is 100 ms: a fast loop would start dozens in this time.
    expect(starts).toBeLessThanOrEqual(12);
    // And each restart came after its crash's backoff, not on the next tick: the next start is
    // logged at least half the announced wait after the crash (a slow machine only adds to it).
    for (const crash of crashes.slice(1, 4)) {
      const next = startLines.find((line) => Number(line.time) > Number(crash.time));
      expect(Number(next?.time) - Number(crash.time), JSON.stringify({ crash, next })).toBeGreaterThanOrEqual(Number(crash.nextStartInMs) / 2);
    }
    expect(waits.slice(0, 4)).toEqual([200, 400, 800, 1_600]);
    expect(waits.every((wait) => wait <= 1_600)).toBe(true);
    expect(h.logLines.filter((line) => line.endpointId === endpoint.id && String(line.msg).includes('unhealthy')).length).toBeGreaterThanOrEqual(1);
    const lines = await h.logs(endpoint.id);
    expect(lines.some((entry) => entry.stream === 'stderr' && entry.line === 'boom')).toBe(true);
    // The same story in the launcher's scale events, as the dashboard reads them.
    const events = h.launcher.scaleEvents(endpoint.id);
    expect(events[0]).toMatchObject({ kind: 'scale-up', endpointId: endpoint.id, workers: 1 });
    const crashEvents = events.filter((event) => event.kind === 'crash');
    expect(crashEvents.slice(0, 4).map((event) => event.nextStartInMs)).toEqual([200, 400, 800, 1_600]);
    expect(crashEvents.every((event) => event.workers === 0 && event.message.includes('code 3'))).toBe(true);
    expect(events.filter((event) => event.kind === 'unhealthy')).toHaveLength(1);
    expect(events.filter((event) => event.kind === 'scale-up').length).toBeGreaterThanOrEqual(starts);
    const route = (await (await fetch(`${h.server.url}/ui/api/scale-events?endpoint=${endpoint.id}`)).json()) as { launcher: boolean; events: unknown[] };
    expect(route.launcher).toBe(true);
    expect(route.events.length).toBeGreaterThanOrEqual(events.length);
    console.log(`[launcher crash] ${starts} starts in ${watchedMs} ms; backoff waits ${waits.join(', ')} ms`);
  }, 120_000);

  it('fails its queued jobs SW_WORKER_START_FAILED with the reason once no worker could start for startFailureTimeoutMs, not at their ttl', async () => {
    const h = await startLauncherHarness({
      images: { 'test/crash:1': { command: 'echo "boom" >&2; exit 3' } },
      backoff: { baseMs: 100, maxMs: 400, unhealthyAfter: 2 },
      startFailureTimeoutMs: 1_000,
    });
    running = h;
    const endpoint = await h.createEndpoint({ workersMin: 0, workersMax: 1 }, { imageName: 'test/crash:1' });
    const first = await h.run(endpoint.id, { n: 1 });
    const ended = async (jobId: string): Promise<{ status: string; error?: string; workerId?: string } | undefined> => {
      const status = await h.json<{ status: string; error?: string; workerId?: string }>('GET', `/v2/${endpoint.id}/status/${jobId}`);
      return status.status === 'IN_QUEUE' || status.status === 'IN_PROGRESS' ? undefined : status;
    };
    const failed = await waitFor(() => ended(first), 'the queued job ends', 60_000, 100);
    expect(failed.status).toBe('FAILED');
    const error = JSON.parse(failed.error ?? '{}') as Record<string, string>;
    expect(error).toMatchObject({ error_code: 'SW_WORKER_START_FAILED', error_type: 'WorkerStartFailed' });
    expect(error.error_message).toMatch(/exited during start-up \d+ times in a row/);
    expect(error.error_message).toContain('code 3');
    // While the endpoint still cannot start a worker, a job queued later fails too, without a ttl's wait.
    const later = await h.run(endpoint.id, { n: 2 });
    expect(await waitFor(() => ended(later), 'the later job ends', 60_000, 100)).toMatchObject({ status: 'FAILED' });
    // The launcher took them as no worker: nothing of it stays in the endpoint's workers.
    expect((await h.health(endpoint.id)).workers).toMatchObject({ idle: 0, running: 0 });
    expect(h.logLines.some((line) => line.endpointId === endpoint.id && String(line.msg).includes('failed SW_WORKER_START_FAILED'))).toBe(true);
  }, 120_000);
});
