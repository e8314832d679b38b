import { describe, expect, it } from 'vitest';
import { readAmdGpus } from '../../src/gpu/read-amd.js';
import { createGpuReader, readGpus } from '../../src/gpu/read-gpus.js';
import { readNvidiaGpus } from '../../src/gpu/read-nvidia.js';
import { runGpuTool } from '../../src/gpu/run-tool.js';
import { GpuReadResultSchema, type GpuReadResult } from '../../src/gpu/reading.js';
import { callLog, fakeToolEnv, noToolEnv, NVIDIA_2X_H100, NVIDIA_MIG_A100, NVIDIA_MIG_A100_LIST, ROCM_2X_MI300X, ANSWER_TIMEOUT_MS } from './fake-tools.js';

const timeoutMs = ANSWER_TIMEOUT_MS;

/** The result, checked against its schema, narrowed to the "no GPU readings" branch. */
function noReadings(result: GpuReadResult) {
  expect(GpuReadResultSchema.parse(result)).toEqual(result);
  if (result.ok) throw new Error(`expected no readings, got ${JSON.stringify(result)}`);
  return result;
}

function readings(result: GpuReadResult) {
  expect(GpuReadResultSchema.parse(result)).toEqual(result);
  if (!result.ok) throw new Error(`expected readings, got ${result.message}`);
  return result;
}

const nvidia = (vars: Record<string, string> = {}) => fakeToolEnv({ FAKE_NVIDIA_SMI_FIXTURE: NVIDIA_2X_H100, ...vars });

describe('readNvidiaGpus with a fake nvidia-smi', () => {
  it('reads the GPUs', async () => {
    const result = readings(await readNvidiaGpus({ timeoutMs, env: nvidia() }));
    expect(result).toMatchObject({ vendor: 'nvidia', tool: 'nvidia-smi', hidden: 0 });
    expect(result.gpus.map((g) => g.name)).toEqual(['NVIDIA H100 80GB HBM3', 'NVIDIA H100 80GB HBM3']);
  });

  it('a missing nvidia-smi is "not-installed"', async () => {
    const result = noReadings(await readNvidiaGpus({ timeoutMs, env: noToolEnv() }));
    expect(result.reason).toBe('not-installed');
    expect(result.message).toBe('nvidia-smi: not found on PATH');
  });

  it('a failing nvidia-smi is "failed", with its exit code and what it said', async () => {
    const result = noReadings(await readNvidiaGpus({ timeoutMs, env: nvidia({ FAKE_NVIDIA_SMI_MODE: 'fail' }) }));
    expect(result.reason).toBe('failed');
    expect(result.message).toMatch(/^nvidia-smi: exited with code 9: NVIDIA-SMI has failed because it couldn't communicate/);
    expect(result.message.length).toBeLessThan(256);
  });

  it('"No devices were found" is "no-devices"', async () => {
    const result = noReadings(await readNvidiaGpus({ timeoutMs, env: nvidia({ FAKE_NVIDIA_SMI_MODE: 'no-devices' }) }));
    expect(result.reason).toBe('no-devices');
  });

  it('garbage output is "unparseable", quoting the start of it', async () => {
    const result = noReadings(await readNvidiaGpus({ timeoutMs, env: nvidia({ FAKE_NVIDIA_SMI_MODE: 'garbage' }) }));
    expect(result.reason).toBe('unparseable');
    expect(result.message).toContain('Segmentation fault');
  });

  it('a hanging nvidia-smi is killed at the timeout: "timed-out"', async () => {
    const result = noReadings(await readNvidiaGpus({ env: nvidia({ FAKE_NVIDIA_SMI_MODE: 'hang' }), timeoutMs: 300 }));
    expect(result.reason).toBe('timed-out');
    expect(result.message).toBe('nvidia-smi: did not answer within 300 ms and was killed');
  });

  it('one that ignores SIGTERM is killed all the same', async () => {
    const result = noReadings(await readNvidiaGpus({ env: nvidia({ FAKE_NVIDIA_SMI_MODE: 'hang-hard' }), timeoutMs: 200 }));
    expect(result.reason).toBe('timed-out');
  });

  it('an aborted read is "cancelled"', async () => {
    const controller = new AbortController();
    const pending = readNvidiaGpus({ env: nvidia({ FAKE_NVIDIA_SMI_MODE: 'hang' }), timeoutMs: 60_000, signal: controller.signal });
    controller.abort();
    expect(noReadings(await pending).reason).toBe('cancelled');
  });

  it('CUDA_VISIBLE_DEVICES limits the GPUs reported', async () => {
    const one = readings(await readNvidiaGpus({ timeoutMs, env: nvidia({ CUDA_VISIBLE_DEVICES: '1' }) }));
    expect(one.gpus.map((g) => g.index)).toEqual([1]);
    expect(one.hidden).toBe(1);
    const byUuid = readings(await readNvidiaGpus({ timeoutMs, env: nvidia({ CUDA_VISIBLE_DEVICES: 'GPU-6f3c2b1a-9d8e-4f70-a1b2-c3d4e5f60718' }) }));
    expect(byUuid.gpus.map((g) => g.index)).toEqual([0]);
  });

  it('CUDA_VISIBLE_DEVICES="" hides every GPU: "none-visible"', async () => {
    const result = noReadings(await readNvidiaGpus({ timeoutMs, env: nvidia({ CUDA_VISIBLE_DEVICES: '' }) }));
    expect(result.reason).toBe('none-visible');
    expect(result.message).toBe('nvidia-smi: lists 2 GPUs but CUDA_VISIBLE_DEVICES="" hides them all');
  });

  it('a MIG uuid in CUDA_VISIBLE_DEVICES is traced to its GPU through nvidia-smi -L', async () => {
    const log = callLog();
    const env = fakeToolEnv({
      FAKE_NVIDIA_SMI_FIXTURE: NVIDIA_MIG_A100,
      FAKE_NVIDIA_SMI_LIST_FIXTURE: NVIDIA_MIG_A100_LIST,
      FAKE_GPU_CALL_LOG: log.path,
      CUDA_VISIBLE_DEVICES: 'MIG-8d2e7a10-3b5c-5f9e-a4d1-6c0b9e8f7a21',
    });
    const result = readings(await readNvidiaGpus({ timeoutMs, env }));
    expect(result.gpus).toHaveLength(1);
    expect(result.gpus[0]).toMatchObject({
      index: 0,
      utilizationPercent: null,
      migInstances: ['MIG-8d2e7a10-3b5c-5f9e-a4d1-6c0b9e8f7a21'],
    });
    expect(log.calls()).toEqual([expect.stringMatching(/^nvidia-smi --query-gpu=/), 'nvidia-smi -L']);
  });

  it('runs nvidia-smi -L only when a MIG uuid is named', async () => {
    const log = callLog();
    readings(await readNvidiaGpus({ timeoutMs, env: nvidia({ FAKE_GPU_CALL_LOG: log.path, CUDA_VISIBLE_DEVICES: '0' }) }));
    expect(log.calls()).toHaveLength(1);
  });
});

describe('readAmdGpus with a fake rocm-smi', () => {
  const amd = (vars: Record<string, string> = {}) => fakeToolEnv({ FAKE_ROCM_SMI_FIXTURE: ROCM_2X_MI300X, ...vars });

  it('reads the GPUs', async () => {
    const result = readings(await readAmdGpus({ timeoutMs, env: amd() }));
    expect(result).toMatchObject({ vendor: 'amd', tool: 'rocm-smi' });
    expect(result.gpus.map((g) => g.name)).toEqual(['AMD Instinct MI300X', 'AMD Instinct MI300X']);
  });

  it('HIP_VISIBLE_DEVICES limits the GPUs reported; CUDA_VISIBLE_DEVICES does not', async () => {
    const result = readings(await readAmdGpus({ timeoutMs, env: amd({ HIP_VISIBLE_DEVICES: '1', CUDA_VISIBLE_DEVICES: '' }) }));
    expect(result.gpus.map((g) => g.uuid)).toEqual(['0x2a7c13b5e0d94f86']);
  });

  it('failing, garbage, hanging and missing each give their reason', async () => {
    expect(noReadings(await readAmdGpus({ timeoutMs, env: amd({ FAKE_ROCM_SMI_MODE: 'fail' }) }))).toMatchObject({
      reason: 'failed',
      message: 'rocm-smi: exited with code 1: ERROR:root:Driver not initialized (amdgpu not found in modules)',
    });
    expect(noReadings(await readAmdGpus({ timeoutMs, env: amd({ FAKE_ROCM_SMI_MODE: 'garbage' }) })).reason).toBe('unparseable');
    expect(noReadings(await readAmdGpus({ env: amd({ FAKE_ROCM_SMI_MODE: 'hang' }), timeoutMs: 300 })).reason).toBe('timed-out');
    expect(noReadings(await readAmdGpus({ timeoutMs, env: noToolEnv() })).reason).toBe('not-installed');
  });
});

describe('readGpus', () => {
  it('reads NVIDIA first and does not run rocm-smi when it answers', async () => {
    const log = callLog();
    const env = fakeToolEnv({ FAKE_NVIDIA_SMI_FIXTURE: NVIDIA_2X_H100, FAKE_ROCM_SMI_FIXTURE: ROCM_2X_MI300X, FAKE_GPU_CALL_LOG: log.path });
    expect(readings(await readGpus({ timeoutMs, env })).vendor).toBe('nvidia');
    expect(log.calls().map((c) => c.split(' ')[0])).toEqual(['nvidia-smi']);
  });

  it('falls back to AMD when nvidia-smi gives no readings', async () => {
    const env = fakeToolEnv({ FAKE_NVIDIA_SMI_MODE: 'fail', FAKE_ROCM_SMI_FIXTURE: ROCM_2X_MI300X });
    expect(readings(await readGpus({ timeoutMs, env })).vendor).toBe('amd');
  });

  it('with neither tool says so for each, and the telling reason wins', async () => {
    const none = noReadings(await readGpus({ timeoutMs, env: noToolEnv() }));
    expect(none).toMatchObject({
      reason: 'not-installed',
      message: 'nvidia-smi: not found on PATH; rocm-smi: not found on PATH',
    });
    expect(none.attempts.map((a) => a.tool)).toEqual(['nvidia-smi', 'rocm-smi']);
    // nvidia-smi present but failing, rocm-smi absent (the fake folder holds both, so drop AMD by vendor list).
    const failing = noReadings(await readGpus({ timeoutMs, env: fakeToolEnv({ FAKE_NVIDIA_SMI_MODE: 'fail' }), vendors: ['nvidia'] }));
    expect(failing.reason).toBe('failed');
  });

  it('createGpuReader does not run a tool again once it was found missing', async () => {
    const log = callLog();
    // The PATH holds no GPU tool: both are missing after the first read.
    const reader = createGpuReader({ timeoutMs, env: noToolEnv({ FAKE_GPU_CALL_LOG: log.path }) });
    const first = noReadings(await reader());
    const second = noReadings(await reader());
    expect(first.reason).toBe('not-installed');
    expect(second.message).toBe(first.message);
    expect(log.calls()).toEqual([]);
  });

  it('createGpuReader keeps running a tool that fails (it may recover)', async () => {
    const log = callLog();
    const reader = createGpuReader({
      timeoutMs,
      env: fakeToolEnv({ FAKE_NVIDIA_SMI_MODE: 'fail', FAKE_ROCM_SMI_MODE: 'fail', FAKE_GPU_CALL_LOG: log.path }),
    });
    expect(noReadings(await reader()).reason).toBe('failed');
    expect(noReadings(await reader()).reason).toBe('failed');
    expect(log.calls().map((c) => c.split(' ')[0])).toEqual(['nvidia-smi', 'rocm-smi', 'nvidia-smi', 'rocm-smi']);
  });
});

describe('runGpuTool', () => {
  it('returns "failed" instead of throwing when execa refuses to start the tool', async () => {
    // The tool is there (the fake one), so the run reaches execa, which refuses the timeout.
    const run = await runGpuTool('nvidia-smi', [], { timeoutMs: -1, env: fakeToolEnv() });
    expect(run).toMatchObject({ kind: 'failed', message: expect.stringMatching(/^could not run \(.*timeout/) });
  });
});
