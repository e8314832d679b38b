/**
 * The platform worker's start-up GPU check (reported unhealthy through the heartbeat)
 * and its /metrics port, with fake nvidia-smi / rocm-smi on PATH and real worker
 * processes against the harness's worker API on 127.0.0.1.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseJobRequest } from '../../src/job/index.js';
import { autoGpuExpectation, resolveOptions, resolvePlatformExtras } from '../../src/worker/index.js';
import { startWorkerApiServer, type RunningWorkerApi } from '../harness/http/worker-api/worker-api-server.js';
import { waitFor } from '../kit/index.js';
import { REPO_ROOT, killAllWorkers, startWorkerProcess } from './worker-process.js';

const ENDPOINT = 'extras';
const PING_MS = 200;
/** These tests are not about liveness: a worker is gone only after 10 s of silence, even on a loaded machine. */
const LIVENESS = { pingIntervalMs: PING_MS, missedPings: 50 };
const FAKE_BIN = join(REPO_ROOT, 'test/fixtures/bin');

let server: RunningWorkerApi | undefined;

afterEach(async () => {
  await killAllWorkers();
  await server?.close();
  server = undefined;
});

describe('platform extras from options and environment', () => {
  const config = resolveOptions({});

  it.each([
    [{ NVIDIA_VISIBLE_DEVICES: 'all' }, 'nvidia'],
    [{ NVIDIA_VISIBLE_DEVICES: 'GPU-1234' }, 'nvidia'],
    [{ NVIDIA_VISIBLE_DEVICES: 'void' }, undefined],
    [{ NVIDIA_VISIBLE_DEVICES: '' }, undefined],
    [{ HIP_VISIBLE_DEVICES: '0' }, 'amd'],
    [{ ROCR_VISIBLE_DEVICES: '0,1' }, 'amd'],
    [{}, undefined],
  ])('auto expects %j -> %s', async (env, expected) => {
    expect(autoGpuExpectation(env)).toBe(expected);
    expect(resolvePlatformExtras(config, env).expectGpu).toBe(expected);
  });

  it('lets the environment override the options', async () => {
    const configured = resolveOptions({ expectGpu: 'amd', metricsPort: 9100 });
    expect(resolvePlatformExtras(configured, {})).toEqual({ expectGpu: 'amd', metricsPort: 9100, metricsHost: '0.0.0.0', harnessReturnWaitMs: 120_000 });
    expect(
      resolvePlatformExtras(configured, {
        SERVERLESS_WORKER_EXPECT_GPU: 'none',
        SERVERLESS_WORKER_METRICS_PORT: '9400',
        SERVERLESS_WORKER_HARNESS_RETURN_WAIT_MS: '30000',
      }),
    ).toEqual({
      expectGpu: undefined,
      metricsPort: 9400,
      metricsHost: '0.0.0.0',
      harnessReturnWaitMs: 30_000,
    });
  });

  it.each([
    ['SERVERLESS_WORKER_EXPECT_GPU', 'intel', 'must be one of auto, nvidia, amd, any, none'],
    ['SERVERLESS_WORKER_METRICS_PORT', 'ninety', 'must be a port number from 0 to 65535'],
    ['SERVERLESS_WORKER_METRICS_PORT', '70000', 'must be a port number from 0 to 65535'],
    ['SERVERLESS_WORKER_HARNESS_RETURN_WAIT_MS', '2 min', 'must be a whole number of milliseconds from 0 to 86400000'],
    ['SERVERLESS_WORKER_HARNESS_RETURN_WAIT_MS', '90000000', 'must be a whole number of milliseconds from 0 to 86400000'],
  ])('names a malformed %s', async (name, value, message) => {
    expect(() => resolvePlatformExtras(config, { [name]: value })).toThrow(
      expect.objectContaining({ code: 'SW_INVALID_ENV', message: expect.stringMatching(new RegExp(`${name}.*${message}`)) }),
    );
  });
});

describe('platform worker processes', () => {
  it('reports a missing GPU through the heartbeat and exits 1 naming what it expected and found', { timeout: 60_000 }, async () => {
    server = await startWorkerApiServer({ liveness: LIVENESS, longPollMs: 5_000 });
    const worker = startWorkerProcess('no-gpu', {
      ...server.envFor(ENDPOINT, PING_MS),
      PATH: `${FAKE_BIN}:${process.env.PATH ?? ''}`,
      FAKE_NVIDIA_SMI_MODE: 'no-devices',
      FAKE_ROCM_SMI_MODE: 'no-devices',
      SERVERLESS_WORKER_EXPECT_GPU: 'nvidia',
    });
    const exit = await Promise.race([worker.exited, new Promise<never>((_, reject) => setTimeout(() => reject(new Error('worker did not exit')), 45_000))]);
    expect(exit.code).toBe(1);
    expect(server.seen.unhealthy).toEqual([
      expect.objectContaining({ workerId: 'no-gpu', check: 'gpu', reason: expect.stringContaining('Expected an NVIDIA GPU') }),
    ]);
    await worker.waitForStderr('start-up check failed');
    // It never took a job.
    expect(server.seen.results).toEqual([]);
  });

  it('serves /metrics with job counts and GPU gauges when a metrics port is set', { timeout: 60_000 }, async () => {
    server = await startWorkerApiServer({ liveness: LIVENESS, longPollMs: 5_000 });
    const worker = startWorkerProcess('with-gpu', {
      ...server.envFor(ENDPOINT, PING_MS),
      PATH: `${FAKE_BIN}:${process.env.PATH ?? ''}`,
      FAKE_NVIDIA_SMI_FIXTURE: 'nvidia-smi.2x-h100.documented-format.csv',
      SERVERLESS_WORKER_EXPECT_GPU: 'nvidia',
      SERVERLESS_WORKER_METRICS_PORT: '0',
      SERVERLESS_WORKER_METRICS_HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
    });
    const url = await waitFor(
      () => /metrics served at (http:\/\/127\.0\.0\.1:\d+\/metrics)/.exec(worker.stderr())?.[1],
      `the metrics URL in the log (stderr: ${worker.stderr().slice(-1_000)})`,
      30_000,
    );
    const endpoint = server.harness.endpoint(ENDPOINT);
    const { id } = await endpoint.submit(parseJobRequest({ input: { mode: 'sleep', ms: 1_500 } }));
    await waitFor(async () => (await endpoint.find(id))?.status === 'COMPLETED' || undefined, 'the job to complete', 30_000);
    const text = await waitFor(
      async () => {
        const body = await (await fetch(url)).text();
        return /serverless_worker_jobs_total\{status="COMPLETED"\} 1/.test(body) ? body : undefined;
      },
      'the job counted in /metrics',
      10_000,
    );
    expect(text).toMatch(/serverless_worker_gpu_memory_total_bytes\{index="0",uuid="GPU-[0-9a-f-]+",name="NVIDIA H100 80GB HBM3"\} \d+/);
    expect(text).toMatch(/serverless_worker_gpu_utilization_ratio\{index="1",/);
    expect(text).toContain('process_resident_memory_bytes');
    const notFound = await fetch(url.replace('/metrics', '/other'));
    expect(notFound.status).toBe(404);
    expect(await notFound.json()).toMatchObject({ error: { code: 'SW_ROUTE_NOT_FOUND' } });
  });
});
