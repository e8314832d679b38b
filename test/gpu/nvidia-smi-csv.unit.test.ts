import { describe, expect, it } from 'vitest';
import { NVIDIA_QUERY_FIELDS, NVIDIA_SMI_ARGS, parseNvidiaSmiCsv } from '../../src/gpu/nvidia-smi-csv.js';
import { GpuReadingSchema } from '../../src/gpu/reading.js';
import { fixture, NVIDIA_2X_H100, NVIDIA_EXTRA_COLUMNS, NVIDIA_MIG_A100, NVIDIA_NA_FIELDS } from './fake-tools.js';

const MIB = 1024 * 1024;

describe('parseNvidiaSmiCsv', () => {
  it('asks nvidia-smi for the documented fields, without header or units', () => {
    expect(NVIDIA_SMI_ARGS).toEqual([
      '--query-gpu=index,uuid,name,utilization.gpu,utilization.memory,memory.used,memory.total,temperature.gpu,power.draw,power.limit,driver_version',
      '--format=csv,noheader,nounits',
    ]);
    expect(NVIDIA_QUERY_FIELDS).toHaveLength(11);
  });

  it('reads two H100s, converting MiB to bytes', () => {
    const { gpus, skipped } = parseNvidiaSmiCsv(fixture(NVIDIA_2X_H100));
    expect(skipped).toEqual([]);
    expect(gpus).toHaveLength(2);
    expect(gpus[0]).toEqual({
      vendor: 'nvidia',
      index: 0,
      uuid: 'GPU-6f3c2b1a-9d8e-4f70-a1b2-c3d4e5f60718',
      name: 'NVIDIA H100 80GB HBM3',
      utilizationPercent: 87,
      memoryUtilizationPercent: 45,
      memoryUsedBytes: 40321 * MIB,
      memoryTotalBytes: 81559 * MIB,
      temperatureCelsius: 64,
      powerDrawWatts: 512.34,
      powerLimitWatts: 700,
      driverVersion: '550.54.15',
    });
    expect(gpus[1]?.index).toBe(1);
    expect(gpus[1]?.utilizationPercent).toBe(3);
    for (const gpu of gpus) expect(GpuReadingSchema.parse(gpu)).toEqual(gpu);
  });

  it('reads a MIG-enabled GPU: utilisation [N/A] is null, memory still read', () => {
    const { gpus } = parseNvidiaSmiCsv(fixture(NVIDIA_MIG_A100));
    expect(gpus.map((g) => g.utilizationPercent)).toEqual([null, 12]);
    expect(gpus.map((g) => g.memoryUtilizationPercent)).toEqual([null, 3]);
    expect(gpus[0]?.memoryUsedBytes).toBe(13184 * MIB);
    expect(gpus[0]?.powerDrawWatts).toBe(88.53);
  });

  it('turns [N/A], [Not Supported], N/A and [Unknown Error] into null', () => {
    const { gpus, skipped } = parseNvidiaSmiCsv(fixture(NVIDIA_NA_FIELDS));
    expect(skipped).toEqual([]);
    expect(gpus[0]).toMatchObject({
      name: 'NVIDIA GeForce RTX 3060 Laptop GPU',
      utilizationPercent: 14,
      memoryUtilizationPercent: null,
      powerDrawWatts: null,
      powerLimitWatts: null,
    });
    expect(gpus[1]).toMatchObject({
      name: 'Tesla T4',
      utilizationPercent: null,
      memoryUtilizationPercent: 0,
      memoryUsedBytes: 0,
      temperatureCelsius: null,
      powerDrawWatts: 27.05,
      driverVersion: null,
    });
  });

  it('ignores blank lines and extra columns, and skips a row with too few columns, saying why', () => {
    const { gpus, skipped } = parseNvidiaSmiCsv(fixture(NVIDIA_EXTRA_COLUMNS));
    expect(gpus.map((g) => g.index)).toEqual([0, 2]);
    expect(gpus[1]).toMatchObject({ name: 'NVIDIA L4', powerLimitWatts: 72, driverVersion: '550.54.15' });
    expect(skipped).toEqual([{ where: 'line 4', reason: 'expected 11 columns, got 8' }]);
  });

  it('skips a header line and rows whose index or uuid is not one', () => {
    const text = [
      'index, uuid, name, utilization.gpu [%], utilization.memory [%], memory.used [MiB], memory.total [MiB], temperature.gpu, power.draw [W], power.limit [W], driver_version',
      'x, GPU-1, a, 1, 1, 1, 1, 1, 1, 1, 1',
      '0, [N/A], a, 1, 1, 1, 1, 1, 1, 1, 1',
    ].join('\r\n');
    const { gpus, skipped } = parseNvidiaSmiCsv(text);
    expect(gpus).toEqual([]);
    expect(skipped.map((s) => s.where)).toEqual(['line 2', 'line 3']);
  });

  it('returns nothing, without throwing, for empty output and garbage', () => {
    expect(parseNvidiaSmiCsv('')).toEqual({ gpus: [], skipped: [] });
    const garbage = parseNvidiaSmiCsv('\u0000\u0001 Segmentation fault\nzzz;;;');
    expect(garbage.gpus).toEqual([]);
    expect(garbage.skipped).toHaveLength(2);
  });
});
