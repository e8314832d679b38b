import { describe, expect, it } from 'vitest';
import type { GpuReading } from '../../src/gpu/reading.js';
import { createWindowAccumulator } from '../../src/gpu/window-summary.js';

const GIB = 1024 ** 3;

function gpu(index: number, util: number | null, memoryGiB: number | null): GpuReading {
  return {
    vendor: 'nvidia',
    index,
    uuid: `GPU-${index}`,
    name: 'NVIDIA H100 80GB HBM3',
    utilizationPercent: util,
    memoryUtilizationPercent: null,
    memoryUsedBytes: memoryGiB === null ? null : memoryGiB * GIB,
    memoryTotalBytes: 80 * GIB,
    temperatureCelsius: null,
    powerDrawWatts: null,
    powerLimitWatts: null,
    driverVersion: null,
  };
}

describe('window summary', () => {
  it('is undefined with no readings', () => {
    expect(createWindowAccumulator().summary()).toBeUndefined();
  });

  it('gives peak and mean utilisation and peak memory over the window', () => {
    const acc = createWindowAccumulator();
    acc.add([gpu(0, 10, 4), gpu(1, 0, 1)]);
    acc.add([gpu(0, 90, 30), gpu(1, 20, 2)]);
    acc.add([gpu(0, 50, 20), gpu(1, 30, 20)]);
    expect(acc.summary()).toEqual({
      samples: 3,
      peakUtilizationPercent: 90,
      meanUtilizationPercent: (10 + 0 + 90 + 20 + 50 + 30) / 6,
      // Memory is summed over the GPUs of one reading: 30 + 2 < 20 + 20.
      peakMemoryUsedBytes: 40 * GIB,
      perGpu: [
        { index: 0, uuid: 'GPU-0', name: 'NVIDIA H100 80GB HBM3', peakUtilizationPercent: 90, meanUtilizationPercent: 50, peakMemoryUsedBytes: 30 * GIB },
        { index: 1, uuid: 'GPU-1', name: 'NVIDIA H100 80GB HBM3', peakUtilizationPercent: 30, meanUtilizationPercent: 50 / 3, peakMemoryUsedBytes: 20 * GIB },
      ],
    });
  });

  it('leaves utilisation null when no GPU reported it (MIG), memory still counted', () => {
    const acc = createWindowAccumulator();
    acc.add([gpu(0, null, 12)]);
    expect(acc.summary()).toMatchObject({
      samples: 1,
      peakUtilizationPercent: null,
      meanUtilizationPercent: null,
      peakMemoryUsedBytes: 12 * GIB,
    });
  });

  it('leaves memory null when no reading had it', () => {
    const acc = createWindowAccumulator();
    acc.add([gpu(0, 5, null)]);
    expect(acc.summary()?.peakMemoryUsedBytes).toBeNull();
  });
});
