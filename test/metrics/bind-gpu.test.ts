import { afterEach, describe, expect, it } from 'vitest';
import { createGpuReader } from '../../src/gpu/read-gpus.js';
import type { GpuReader } from '../../src/gpu/reading.js';
import { createGpuSampler, type GpuSampler } from '../../src/gpu/sampler.js';
import { bindGpuMetrics } from '../../src/metrics/bind-gpu.js';
import { createMetrics } from '../../src/metrics/create-metrics.js';
import { ANSWER_TIMEOUT_MS, fakeToolEnv, noToolEnv, NVIDIA_2X_H100, NVIDIA_MIG_A100, ROCM_2X_MI300X } from '../gpu/fake-tools.js';

const MIB = 1024 * 1024;
const H100_0 = 'index="0",uuid="GPU-6f3c2b1a-9d8e-4f70-a1b2-c3d4e5f60718",name="NVIDIA H100 80GB HBM3"';
const H100_1 = 'index="1",uuid="GPU-0a1b2c3d-4e5f-6a7b-8c9d-0e1f2a3b4c5d",name="NVIDIA H100 80GB HBM3"';

const samplers: GpuSampler[] = [];
function sampler(reader: GpuReader): GpuSampler {
  const s = createGpuSampler({ reader });
  samplers.push(s);
  return s;
}
afterEach(async () => {
  await Promise.all(samplers.splice(0).map((s) => s.close()));
});

describe('bindGpuMetrics', () => {
  it('puts each GPU reading from a fake nvidia-smi into labelled gauges', async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    const s = sampler(createGpuReader({ timeoutMs: ANSWER_TIMEOUT_MS, env: fakeToolEnv({ FAKE_NVIDIA_SMI_FIXTURE: NVIDIA_2X_H100 }) }));
    bindGpuMetrics(metrics, s);
    await s.sample();
    const text = await metrics.text();
    for (const line of [
      `serverless_worker_gpu_utilization_ratio{${H100_0}} 0.87`,
      `serverless_worker_gpu_utilization_ratio{${H100_1}} 0.03`,
      `serverless_worker_gpu_memory_activity_ratio{${H100_0}} 0.45`,
      `serverless_worker_gpu_memory_used_bytes{${H100_0}} ${40321 * MIB}`,
      `serverless_worker_gpu_memory_total_bytes{${H100_1}} ${81559 * MIB}`,
      `serverless_worker_gpu_temperature_celsius{${H100_0}} 64`,
      `serverless_worker_gpu_power_watts{${H100_0}} 512.34`,
      `serverless_worker_gpu_power_limit_watts{${H100_0}} 700`,
      'serverless_worker_gpu_readings_available 1',
    ]) {
      expect(text).toContain(line);
    }
  });

  it('leaves out a figure the GPU does not report (utilisation of a MIG-enabled GPU)', async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    const s = sampler(createGpuReader({ timeoutMs: ANSWER_TIMEOUT_MS, env: fakeToolEnv({ FAKE_NVIDIA_SMI_FIXTURE: NVIDIA_MIG_A100 }) }));
    bindGpuMetrics(metrics, s);
    await s.sample();
    const utilization = (await metrics.text()).split('\n').filter((l) => l.startsWith('serverless_worker_gpu_utilization_ratio{'));
    expect(utilization).toEqual([
      'serverless_worker_gpu_utilization_ratio{index="1",uuid="GPU-9e8d7c6b-5a49-3827-1605-f4e3d2c1b0a9",name="NVIDIA A100-SXM4-80GB"} 0.12',
    ]);
    expect(await metrics.text()).toContain('serverless_worker_gpu_memory_used_bytes{index="0"');
  });

  it('reads AMD GPUs the same way', async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    const s = sampler(
      createGpuReader({ timeoutMs: ANSWER_TIMEOUT_MS, env: fakeToolEnv({ FAKE_NVIDIA_SMI_MODE: 'fail', FAKE_ROCM_SMI_FIXTURE: ROCM_2X_MI300X }) }),
    );
    bindGpuMetrics(metrics, s);
    await s.sample();
    expect(await metrics.text()).toContain('serverless_worker_gpu_utilization_ratio{index="0",uuid="0x18f68e602b8a790f",name="AMD Instinct MI300X"} 0.92');
  });

  it('clears the gauges and counts the failure when readings stop; unbinding stops updates', async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    const good = createGpuReader({ timeoutMs: ANSWER_TIMEOUT_MS, env: fakeToolEnv({ FAKE_NVIDIA_SMI_FIXTURE: NVIDIA_2X_H100 }) });
    const hanging = createGpuReader({ timeoutMs: 200, vendors: ['nvidia'], env: fakeToolEnv({ FAKE_NVIDIA_SMI_MODE: 'hang' }) });
    let current = good;
    const s = sampler((options) => current(options));
    const unbind = bindGpuMetrics(metrics, s);
    await s.sample();
    current = hanging;
    await s.sample();
    let text = await metrics.text();
    expect(text).not.toContain('serverless_worker_gpu_utilization_ratio{');
    expect(text).toContain('serverless_worker_gpu_readings_available 0');
    expect(text).toContain('serverless_worker_gpu_read_failures_total{reason="timed-out"} 1');
    unbind();
    current = good;
    await s.sample();
    text = await metrics.text();
    expect(text).not.toContain('serverless_worker_gpu_utilization_ratio{');
  });

  it('applies a read that happened before binding, and counts "not-installed" once the sampler gives up', async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    const s = sampler(createGpuReader({ env: noToolEnv() }));
    await s.sample();
    bindGpuMetrics(metrics, s);
    const text = await metrics.text();
    expect(text).toContain('serverless_worker_gpu_readings_available 0');
    expect(text).toContain('serverless_worker_gpu_read_failures_total{reason="not-installed"} 1');
    expect(s.state).toBe('disabled');
  });
});
