import { afterEach, describe, expect, it, vi } from 'vitest';
import { createGpuReader } from '../../src/gpu/read-gpus.js';
import type { GpuReader, GpuReading, GpuReadResult } from '../../src/gpu/reading.js';
import { createGpuSampler, type GpuSampler } from '../../src/gpu/sampler.js';
import { isServerlessWorkerError } from '../../src/job/errors.js';
import { ANSWER_TIMEOUT_MS, callLog, fakeToolEnv, noToolEnv, NVIDIA_2X_H100 } from './fake-tools.js';

const MIB = 1024 * 1024;
// Bounds every wait; generous for loaded machines, never a threshold on speed.
const WAIT = { timeout: 20_000, interval: 10 };

const samplers: GpuSampler[] = [];
function track(sampler: GpuSampler): GpuSampler {
  samplers.push(sampler);
  return sampler;
}
afterEach(async () => {
  await Promise.all(samplers.splice(0).map((s) => s.close()));
});

/** A reader that counts its calls, around a real one. */
function counting(reader: GpuReader): { reader: GpuReader; reads: () => number } {
  let reads = 0;
  return {
    reader: (options) => {
      reads += 1;
      return reader(options);
    },
    reads: () => reads,
  };
}

describe('GPU sampler with a fake nvidia-smi', () => {
  it('polls while a window is open and summarises the window', async () => {
    const log = callLog();
    const sampler = track(
      createGpuSampler({
        intervalMs: 20,
        timeoutMs: ANSWER_TIMEOUT_MS,
        env: fakeToolEnv({ FAKE_NVIDIA_SMI_FIXTURE: NVIDIA_2X_H100, FAKE_GPU_CALL_LOG: log.path }),
      }),
    );
    expect(sampler.state).toBe('idle');
    const window = sampler.beginWindow();
    await vi.waitFor(() => expect(log.calls().length).toBeGreaterThanOrEqual(3), WAIT);
    const summary = window.end();
    expect(summary?.samples).toBeGreaterThanOrEqual(2);
    expect(summary).toMatchObject({
      peakUtilizationPercent: 87,
      meanUtilizationPercent: 45,
      peakMemoryUsedBytes: (40321 + 1024) * MIB,
    });
    expect(summary?.perGpu.map((g) => g.peakUtilizationPercent)).toEqual([87, 3]);
    expect(window.end()).toBe(summary);
    expect(sampler.latest()?.ok).toBe(true);
    // No window and not started: polling stops.
    await vi.waitFor(() => expect(sampler.state).toBe('idle'), WAIT);
  });

  it('start() polls with no window; stop() ends it', async () => {
    const log = callLog();
    const sampler = track(
      createGpuSampler({
        intervalMs: 20,
        timeoutMs: ANSWER_TIMEOUT_MS,
        env: fakeToolEnv({ FAKE_NVIDIA_SMI_FIXTURE: NVIDIA_2X_H100, FAKE_GPU_CALL_LOG: log.path }),
      }),
    );
    sampler.start();
    expect(sampler.state).toBe('polling');
    await vi.waitFor(() => expect(log.calls().length).toBeGreaterThanOrEqual(2), WAIT);
    sampler.stop();
    await vi.waitFor(() => expect(sampler.state).toBe('idle'), WAIT);
  });

  it('a tool hanging past its timeout gives "timed-out" readings and the sampler keeps going', async () => {
    const sampler = track(createGpuSampler({ intervalMs: 20, timeoutMs: 200, env: fakeToolEnv({ FAKE_NVIDIA_SMI_MODE: 'hang', FAKE_ROCM_SMI_MODE: 'hang' }) }));
    const window = sampler.beginWindow();
    await vi.waitFor(() => expect(sampler.latest()).toMatchObject({ ok: false, reason: 'timed-out' }), WAIT);
    expect(sampler.latest()).toMatchObject({
      message: 'nvidia-smi: did not answer within 200 ms and was killed; rocm-smi: did not answer within 200 ms and was killed',
    });
    expect(sampler.state).toBe('polling');
    expect(window.end()).toBeUndefined();
  });

  it('with no tool on PATH it reads once, then never again', async () => {
    const { reader, reads } = counting(createGpuReader({ env: noToolEnv() }));
    const sampler = track(createGpuSampler({ intervalMs: 20, reader }));
    const window = sampler.beginWindow();
    await vi.waitFor(() => expect(sampler.state).toBe('disabled'), WAIT);
    expect(sampler.latest()).toMatchObject({ ok: false, reason: 'not-installed' });
    expect(window.end()).toBeUndefined();
    // Jobs keep starting: windows cost nothing, no read runs.
    expect(sampler.beginWindow().end()).toBeUndefined();
    sampler.start();
    expect(await sampler.sample()).toMatchObject({ reason: 'not-installed' });
    expect(sampler.state).toBe('disabled');
    expect(reads()).toBe(1);
  });

  it('close() kills a read under way', async () => {
    const log = callLog();
    const sampler = createGpuSampler({
      timeoutMs: 60_000,
      env: fakeToolEnv({ FAKE_NVIDIA_SMI_MODE: 'hang', FAKE_GPU_CALL_LOG: log.path }),
    });
    sampler.start();
    await vi.waitFor(() => expect(log.calls()).toHaveLength(1), WAIT);
    await sampler.close();
    expect(sampler.latest()).toMatchObject({ ok: false, reason: 'cancelled' });
    expect(sampler.state).toBe('closed');
  });
});

describe('GPU sampler windows with a scripted reader', () => {
  function reading(util: number, memoryMiB: number): GpuReading {
    return {
      vendor: 'amd',
      index: 0,
      uuid: '0x1',
      name: 'AMD Instinct MI300X',
      utilizationPercent: util,
      memoryUtilizationPercent: null,
      memoryUsedBytes: memoryMiB * MIB,
      memoryTotalBytes: null,
      temperatureCelsius: null,
      powerDrawWatts: null,
      powerLimitWatts: null,
      driverVersion: null,
    };
  }

  function scripted(utils: number[]): GpuReader {
    let i = 0;
    return async () => {
      const util = utils[Math.min(i, utils.length - 1)] ?? 0;
      i += 1;
      const result: GpuReadResult = { ok: true, vendor: 'amd', tool: 'rocm-smi', gpus: [reading(util, util * 10)], hidden: 0, readAt: Date.now() };
      return result;
    };
  }

  it('each window sees the readings taken while it was open', async () => {
    // An hour between polls: only the read at the first window and explicit sample() calls run.
    const sampler = track(createGpuSampler({ intervalMs: 3_600_000, reader: scripted([10, 50, 30, 70]) }));
    const seen: number[] = [];
    const unsubscribe = sampler.onReading((r) => {
      if (r.ok) seen.push(r.gpus[0]?.utilizationPercent ?? -1);
    });
    sampler.onReading(() => {
      throw new Error('a broken listener');
    });
    const a = sampler.beginWindow();
    await vi.waitFor(() => expect(seen).toEqual([10]), WAIT);
    await sampler.sample();
    const b = sampler.beginWindow();
    await sampler.sample();
    expect(a.end()).toMatchObject({ samples: 3, peakUtilizationPercent: 50, meanUtilizationPercent: 30, peakMemoryUsedBytes: 500 * MIB });
    unsubscribe();
    await sampler.sample();
    expect(b.end()).toMatchObject({ samples: 2, peakUtilizationPercent: 70, meanUtilizationPercent: 50 });
    expect(seen).toEqual([10, 50, 30]);
  });

  it('joins a read already under way instead of starting another', async () => {
    const { reader, reads } = counting(scripted([1]));
    const sampler = track(createGpuSampler({ reader }));
    const [x, y] = await Promise.all([sampler.sample(), sampler.sample()]);
    expect(x).toBe(y);
    expect(reads()).toBe(1);
  });

  it('a reader that throws gives a "failed" reading, not a crash', async () => {
    const sampler = track(createGpuSampler({ reader: () => Promise.reject(new Error('boom')) }));
    expect(await sampler.sample()).toMatchObject({ ok: false, reason: 'failed', message: 'GPU reader threw: boom' });
  });

  it('a reader that throws before returning a promise is read again next time, not answered from a stuck read', async () => {
    let calls = 0;
    const sampler = track(
      createGpuSampler({
        reader: () => {
          calls++;
          throw new Error(`sync boom ${calls}`);
        },
      }),
    );
    expect(await sampler.sample()).toMatchObject({ ok: false, reason: 'failed', message: 'GPU reader threw: sync boom 1' });
    expect(await sampler.sample()).toMatchObject({ ok: false, reason: 'failed', message: 'GPU reader threw: sync boom 2' });
    expect(calls).toBe(2);
  });

  it('refuses bad options with SW_INVALID_OPTIONS naming the option', () => {
    let caught: unknown;
    try {
      createGpuSampler({ intervalMs: 0 });
    } catch (error) {
      caught = error;
    }
    expect(isServerlessWorkerError(caught) && caught.code).toBe('SW_INVALID_OPTIONS');
    expect((caught as Error).message).toMatch(/intervalMs/);
  });
});

describe('sampler options', () => {
  it('accepts process.env itself as its environment', async () => {
    const sampler = createGpuSampler({ env: process.env });
    await sampler.close();
    expect(sampler.state).toBe('closed');
  });
});
