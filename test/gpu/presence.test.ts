import { describe, expect, it } from 'vitest';
import { checkGpuPresence, GPU_HEALTH_CHECK_NAME } from '../../src/gpu/presence.js';
import { ANSWER_TIMEOUT_MS, fakeToolEnv, noToolEnv, NVIDIA_2X_H100, ROCM_2X_MI300X } from './fake-tools.js';

const timeoutMs = ANSWER_TIMEOUT_MS;

describe('checkGpuPresence', () => {
  it('passes when the expected vendor answers', async () => {
    const env = fakeToolEnv({ FAKE_NVIDIA_SMI_FIXTURE: NVIDIA_2X_H100, FAKE_ROCM_SMI_FIXTURE: ROCM_2X_MI300X });
    expect(await checkGpuPresence('nvidia', { env, timeoutMs })).toMatchObject({ ok: true, vendor: 'nvidia' });
    expect(await checkGpuPresence('amd', { env, timeoutMs })).toMatchObject({ ok: true, vendor: 'amd' });
    const any = await checkGpuPresence('any', { env, timeoutMs });
    expect(any.ok && any.gpus).toHaveLength(2);
    expect(GPU_HEALTH_CHECK_NAME).toBe('gpu');
  });

  it('says what was expected and that nothing was found', async () => {
    const result = await checkGpuPresence('nvidia', { env: noToolEnv(), timeoutMs });
    expect(result).toMatchObject({
      ok: false,
      expected: 'nvidia',
      found: 'no GPU (nvidia-smi: not found on PATH; rocm-smi: not found on PATH)',
      message: 'Expected an NVIDIA GPU (nvidia-smi) but found no GPU (nvidia-smi: not found on PATH; rocm-smi: not found on PATH)',
    });
  });

  it('says which other GPU was found instead', async () => {
    const env = fakeToolEnv({ FAKE_NVIDIA_SMI_MODE: 'fail', FAKE_ROCM_SMI_FIXTURE: ROCM_2X_MI300X });
    const result = await checkGpuPresence('nvidia', { env, timeoutMs });
    if (result.ok) throw new Error('expected the check to fail');
    expect(result.found).toMatch(/^2 AMD GPUs \(AMD Instinct MI300X\); nvidia-smi: exited with code 9: NVIDIA-SMI has failed/);
    expect(result.message.startsWith('Expected an NVIDIA GPU (nvidia-smi) but found 2 AMD GPUs')).toBe(true);
    expect(result.readings.ok && result.readings.vendor).toBe('amd');
  });

  it('fits the heartbeat reason (256 chars) when a tool fails, hangs or is hidden', async () => {
    const hung = await checkGpuPresence('amd', {
      env: fakeToolEnv({ FAKE_ROCM_SMI_MODE: 'hang', FAKE_NVIDIA_SMI_MODE: 'fail' }),
      timeoutMs: 200,
    });
    expect(hung.ok).toBe(false);
    if (!hung.ok) {
      expect(hung.message).toMatch(/^Expected an AMD GPU \(rocm-smi\) but found no GPU \(rocm-smi: did not answer within 200 ms/);
      expect(hung.message.length).toBeLessThanOrEqual(256);
    }
    const hidden = await checkGpuPresence('any', {
      env: fakeToolEnv({ FAKE_NVIDIA_SMI_FIXTURE: NVIDIA_2X_H100, CUDA_VISIBLE_DEVICES: '', FAKE_ROCM_SMI_MODE: 'fail' }),
      timeoutMs,
    });
    expect(hidden).toMatchObject({ ok: false, expected: 'any' });
    if (!hidden.ok) expect(hidden.message).toContain('CUDA_VISIBLE_DEVICES="" hides them all');
  });
});
