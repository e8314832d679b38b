import { describe, expect, it } from 'vitest';
import { parseNvidiaSmiList } from '../../src/gpu/nvidia-smi-list.js';
import { fixture, NVIDIA_MIG_A100_LIST } from './fake-tools.js';

describe('parseNvidiaSmiList', () => {
  it('lists MIG instances under their GPU', () => {
    expect(parseNvidiaSmiList(fixture(NVIDIA_MIG_A100_LIST))).toEqual([
      {
        index: 0,
        uuid: 'GPU-5d5ba0d6-d33d-2b2c-524d-9e3d8d2b8a77',
        migUuids: ['MIG-c6d4f1ef-42e4-5de3-91c7-45d71c87eb3f', 'MIG-8d2e7a10-3b5c-5f9e-a4d1-6c0b9e8f7a21', 'MIG-1f0e2d3c-4b5a-5968-8776-a5b4c3d2e1f0'],
      },
      { index: 1, uuid: 'GPU-9e8d7c6b-5a49-3827-1605-f4e3d2c1b0a9', migUuids: [] },
    ]);
  });

  it('reads the MIG uuid format of drivers before R470', () => {
    const text = 'GPU 0: A100-SXM4-40GB (UUID: GPU-aaaa)\n  MIG 1g.5gb Device 0: (UUID: MIG-GPU-aaaa/7/0)\n';
    expect(parseNvidiaSmiList(text)[0]?.migUuids).toEqual(['MIG-GPU-aaaa/7/0']);
  });

  it('ignores lines it does not know', () => {
    expect(parseNvidiaSmiList('garbage\n  MIG orphan (UUID: MIG-x)\n')).toEqual([]);
  });
});
