import { describe, expect, it } from 'vitest';
import { GpuReadingSchema } from '../../src/gpu/reading.js';
import { parseRocmSmiJson, ROCM_SMI_ARGS } from '../../src/gpu/rocm-smi-json.js';
import { fixture, ROCM_2X_MI300X, ROCM_OLDER_KEYS } from './fake-tools.js';

describe('parseRocmSmiJson', () => {
  it('asks rocm-smi for JSON with use, memory, temperature, power and product name', () => {
    for (const flag of ['--showuse', '--showmemuse', '--showtemp', '--showpower', '--showproductname', '--showmeminfo', '--json']) {
      expect(ROCM_SMI_ARGS).toContain(flag);
    }
  });

  it('reads two MI300X; edge temperature N/A falls back to junction', () => {
    const { gpus, skipped } = parseRocmSmiJson(fixture(ROCM_2X_MI300X));
    expect(skipped).toEqual([]);
    expect(gpus).toHaveLength(2);
    expect(gpus[0]).toEqual({
      vendor: 'amd',
      index: 0,
      uuid: '0x18f68e602b8a790f',
      name: 'AMD Instinct MI300X',
      utilizationPercent: 92,
      memoryUtilizationPercent: 37,
      memoryUsedBytes: 125829120000,
      memoryTotalBytes: 205822885888,
      temperatureCelsius: 58,
      powerDrawWatts: 412,
      powerLimitWatts: 750,
      driverVersion: '6.7.0',
    });
    expect(gpus[1]).toMatchObject({ index: 1, uuid: '0x2a7c13b5e0d94f86', utilizationPercent: 0, temperatureCelsius: 41 });
    for (const gpu of gpus) expect(GpuReadingSchema.parse(gpu)).toEqual(gpu);
  });

  it('reads older key spellings; N/A and -1 become null; no Unique ID gives cardN', () => {
    const { gpus } = parseRocmSmiJson(fixture(ROCM_OLDER_KEYS));
    expect(gpus).toEqual([
      {
        vendor: 'amd',
        index: 0,
        uuid: 'card0',
        name: 'Navi 31 [Radeon RX 7900 XT/7900 XTX]',
        utilizationPercent: 17,
        memoryUtilizationPercent: null,
        memoryUsedBytes: 8589934592,
        memoryTotalBytes: 25753026560,
        temperatureCelsius: 54,
        powerDrawWatts: null,
        powerLimitWatts: null,
        driverVersion: null,
      },
    ]);
  });

  it('orders cards by number, takes numbers as numbers, and skips keys that are not cards', () => {
    const text = JSON.stringify({
      card10: { 'GPU use (%)': 5 },
      card2: { 'GPU use (%)': '7' },
      card3: 'oops',
      extra: {},
    });
    const { gpus, skipped } = parseRocmSmiJson(text);
    expect(gpus.map((g) => [g.index, g.utilizationPercent])).toEqual([
      [2, 7],
      [10, 5],
    ]);
    expect(skipped).toEqual([
      { where: 'card3', reason: 'not an object' },
      { where: 'extra', reason: 'not a cardN key' },
    ]);
  });

  it('reads the JSON after warning lines rocm-smi printed first', () => {
    const text = `WARNING: AMD GPU device(s) is/are in a low-power state. Check power control/runtime_status\n\n${fixture(ROCM_2X_MI300X)}`;
    expect(parseRocmSmiJson(text).gpus).toHaveLength(2);
  });

  it('returns nothing, without throwing, for empty output, garbage and non-objects', () => {
    expect(parseRocmSmiJson('')).toEqual({ gpus: [], skipped: [] });
    expect(parseRocmSmiJson('zzz;;;').skipped).toEqual([{ where: 'document', reason: 'not a JSON object' }]);
    expect(parseRocmSmiJson('[1,2]').gpus).toEqual([]);
    expect(parseRocmSmiJson('{"card0": ').gpus).toEqual([]);
  });
});
