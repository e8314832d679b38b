import { describe, expect, it } from 'vitest';
import { parseNvidiaSmiCsv } from '../../src/gpu/nvidia-smi-csv.js';
import { parseRocmSmiJson } from '../../src/gpu/rocm-smi-json.js';
import { filterVisibleGpus, parseVisibleDevices } from '../../src/gpu/visible-devices.js';
import { fixture, NVIDIA_2X_H100, NVIDIA_MIG_A100, ROCM_2X_MI300X } from './fake-tools.js';

const h100 = parseNvidiaSmiCsv(fixture(NVIDIA_2X_H100)).gpus;
const mi300x = parseRocmSmiJson(fixture(ROCM_2X_MI300X)).gpus;
const visible = (value: string | undefined, gpus = h100) => filterVisibleGpus(gpus, parseVisibleDevices(value)).visible.map((g) => g.index);

describe('visible devices', () => {
  it('unset shows all, empty shows none', () => {
    expect(parseVisibleDevices(undefined)).toBeUndefined();
    expect(parseVisibleDevices('')).toEqual([]);
    expect(parseVisibleDevices(' 1 , 0 ')).toEqual(['1', '0']);
    expect(visible(undefined)).toEqual([0, 1]);
    expect(visible('')).toEqual([]);
    expect(filterVisibleGpus(h100, []).hidden).toBe(2);
  });

  it('selects by index, in the order given', () => {
    expect(visible('1')).toEqual([1]);
    expect(visible('1,0')).toEqual([1, 0]);
    expect(visible('0,0')).toEqual([0]);
  });

  it('selects by uuid and by unique uuid prefix, ignoring case', () => {
    expect(visible('GPU-0a1b2c3d-4e5f-6a7b-8c9d-0e1f2a3b4c5d')).toEqual([1]);
    expect(visible('gpu-6F3C')).toEqual([0]);
    // "GPU-" alone is a prefix of both: it names no single GPU.
    expect(visible('GPU-')).toEqual([]);
  });

  it('stops at the first entry that names no GPU, as CUDA does', () => {
    expect(visible('-1')).toEqual([]);
    expect(visible('0,7,1')).toEqual([0]);
    expect(visible('1,GPU-ffff')).toEqual([1]);
  });

  it('maps a MIG instance uuid to its parent GPU and records the instance', () => {
    const a100 = parseNvidiaSmiCsv(fixture(NVIDIA_MIG_A100)).gpus;
    const parents = new Map([['MIG-c6d4f1ef-42e4-5de3-91c7-45d71c87eb3f', 'GPU-5d5ba0d6-d33d-2b2c-524d-9e3d8d2b8a77']]);
    const result = filterVisibleGpus(a100, ['MIG-c6d4f1ef-42e4-5de3-91c7-45d71c87eb3f'], parents);
    expect(result.visible).toHaveLength(1);
    expect(result.visible[0]).toMatchObject({ index: 0, migInstances: ['MIG-c6d4f1ef-42e4-5de3-91c7-45d71c87eb3f'] });
    expect(result.hidden).toBe(1);
    // Without the -L map a MIG uuid names nothing.
    expect(filterVisibleGpus(a100, ['MIG-c6d4f1ef-42e4-5de3-91c7-45d71c87eb3f']).visible).toEqual([]);
  });

  it('matches an AMD card by index, by rocm-smi Unique ID, and by its HIP GPU- form', () => {
    expect(visible('1', mi300x)).toEqual([1]);
    expect(visible('0x2a7c13b5e0d94f86', mi300x)).toEqual([1]);
    expect(visible('GPU-18f68e602b8a790f', mi300x)).toEqual([0]);
  });
});
