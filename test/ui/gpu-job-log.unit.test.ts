/**
 * The job page's GPU summary (src/harness/dashboard/gpu-job-log.ts) over HTTP: a harness
 * whose dashboard has a GPU sampler (a real one, with a scripted reader in place of
 * nvidia-smi) folds each reading into the jobs in-process workers hold; a job held by
 * a remote worker (heartbeats, the worker API) gets none and says why, and so does
 * every job of a harness without a GPU source. No browser.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createGpuSampler, type GpuReader, type GpuReadResult, type GpuSampler } from '../../src/gpu/index.js';
import type { JobGpuView } from '../../packages/platform/src/harness/dashboard/index.js';
import { call, startTestServer, type TestServer } from '../kit/index.js';

const GIB = 2 ** 30;
let server: TestServer | undefined;
let sampler: GpuSampler | undefined;

afterEach(async () => {
  await server?.close();
  await sampler?.close();
  server = undefined;
  sampler = undefined;
});

/** Readings of two cards, utilisation from `utils` one read after the other (the last repeats). */
function scripted(utils: number[]): GpuReader {
  let i = 0;
  return async () => {
    const util = utils[Math.min(i, utils.length - 1)] ?? 0;
    i += 1;
    const card = (index: number, percent: number) => ({
      vendor: 'nvidia' as const,
      index,
      uuid: `GPU-${index}`,
      name: 'Test card',
      utilizationPercent: percent,
      memoryUtilizationPercent: null,
      memoryUsedBytes: percent * GIB,
      memoryTotalBytes: 80 * GIB,
      temperatureCelsius: null,
      powerDrawWatts: null,
      powerLimitWatts: null,
      driverVersion: null,
    });
    const result: GpuReadResult = { ok: true, vendor: 'nvidia', tool: 'nvidia-smi', hidden: 0, readAt: Date.now(), gpus: [card(0, util), card(1, util / 2)] };
    return result;
  };
}

async function jobGpu(endpointId: string, jobId: string): Promise<JobGpuView> {
  const answer = await call('GET', `${server!.url}/ui/api/endpoints/${endpointId}/jobs/${jobId}`);
  expect(answer.status).toBe(200);
  return (answer.json as { gpu: JobGpuView }).gpu;
}

/** Read once and wait until the listener's fold has landed (it lists the workers first). */
async function readAndFold(endpointId: string, jobId: string, samples: number): Promise<void> {
  await sampler!.sample();
  await expect
    .poll(async () => {
      const gpu = await jobGpu(endpointId, jobId);
      return gpu.available ? gpu.summary.samples : 0;
    })
    .toBe(samples);
}

describe("the job page's GPU summary", () => {
  it("folds readings into the jobs in-process workers hold, not into a remote worker's, and stops at the job's end", async () => {
    // An hour between polls: only the explicit reads below happen.
    sampler = createGpuSampler({ intervalMs: 3_600_000, reader: scripted([20, 60, 40, 90]) });
    server = await startTestServer({ dashboard: { gpu: sampler } });
    const endpoint = server.harness.endpoint('gpu');
    const local = await endpoint.submit({ input: { n: 1 } });
    const remote = await endpoint.submit({ input: { n: 2 } });
    // In process: a worker that never sent a heartbeat. Remote: one that did (the worker API marks it so).
    expect((await endpoint.take('in-process', 1)).map((job) => job.id)).toEqual([local.id]);
    await endpoint.workers.touch('remote', { heartbeats: true });
    expect((await endpoint.take('remote', 1)).map((job) => job.id)).toEqual([remote.id]);

    const before = await jobGpu('gpu', local.id);
    expect(before).toEqual({
      available: false,
      reason: 'no GPU reading was taken while in-process (an in-process worker) ran it: no GPU, or a job shorter than one reading',
    });
    await readAndFold('gpu', local.id, 1);
    await readAndFold('gpu', local.id, 2);
    await readAndFold('gpu', local.id, 3);
    const running = await jobGpu('gpu', local.id);
    expect(running).toEqual({
      available: true,
      summary: {
        samples: 3,
        peakUtilizationPercent: 60,
        // Both cards, three reads: (20 + 60 + 40 + 10 + 30 + 20) / 6.
        meanUtilizationPercent: 30,
        peakMemoryUsedBytes: 90 * GIB,
        perGpu: [
          { index: 0, uuid: 'GPU-0', name: 'Test card', peakUtilizationPercent: 60, meanUtilizationPercent: 40, peakMemoryUsedBytes: 60 * GIB },
          { index: 1, uuid: 'GPU-1', name: 'Test card', peakUtilizationPercent: 30, meanUtilizationPercent: 20, peakMemoryUsedBytes: 30 * GIB },
        ],
      },
    });
    const remoteGpu = await jobGpu('gpu', remote.id);
    expect(remoteGpu.available).toBe(false);
    expect(remoteGpu.available ? '' : remoteGpu.reason).toBe(
      'remote ran it: a remote worker (over the worker API), which reads its own GPUs; the harness takes no reading for it, its GPU use is in its own job-finished log line (in the log lines below, when the harness captures them)',
    );

    // Ended: later readings (90 %) are not counted.
    await endpoint.complete(local.id, 'in-process', { kind: 'output', output: { ok: true } });
    await sampler.sample();
    await sampler.sample();
    const done = await jobGpu('gpu', local.id);
    expect(done.available && done.summary).toMatchObject({ samples: 3, peakUtilizationPercent: 60 });
  });

  it('counts the jobs of workers named local (the --serve-api worker child) although they send heartbeats', async () => {
    sampler = createGpuSampler({ intervalMs: 3_600_000, reader: scripted([50]) });
    server = await startTestServer({ dashboard: { gpu: sampler, localWorkers: (endpointId, workerId) => endpointId === 'gpu' && workerId === 'local-1' } });
    const endpoint = server.harness.endpoint('gpu');
    const child = await endpoint.submit({ input: { n: 1 } });
    const remote = await endpoint.submit({ input: { n: 2 } });
    await endpoint.workers.touch('local-1', { heartbeats: true });
    expect((await endpoint.take('local-1', 1)).map((job) => job.id)).toEqual([child.id]);
    await endpoint.workers.touch('remote', { heartbeats: true });
    expect((await endpoint.take('remote', 1)).map((job) => job.id)).toEqual([remote.id]);
    await readAndFold('gpu', child.id, 1);
    expect((await jobGpu('gpu', remote.id)).available).toBe(false);
  });

  it('says why there is none on a harness without a GPU source', async () => {
    server = await startTestServer();
    const endpoint = server.harness.endpoint('cpu');
    const job = await endpoint.submit({ input: {} });
    await endpoint.take('in-process', 1);
    const gpu = await jobGpu('cpu', job.id);
    expect(gpu.available).toBe(false);
    expect(gpu.available ? '' : gpu.reason).toBe(
      'this harness has no GPU source: only in-process workers (--serve-api with GPU sampling) report it here; in-process ran it',
    );
  });
});
