/**
 * The launcher's small parts on their own: GPU pool (never shares a device, gives
 * back), crash backoff (doubling, capped, unhealthy after start-up crashes, reset),
 * the worker environment, the per-endpoint log ring, and the --image / --gpus parsers.
 */
import { describe, expect, it } from 'vitest';
import { parseGpuList } from '../../../src/cli/harness-launcher.js';
import { CrashBackoff, GpuPool, WorkerLogs, launchEnv, parseImageFlag } from '../../../src/harness/launcher/index.js';

describe('GpuPool', () => {
  it('hands out distinct devices, refuses more than are free, takes them back', () => {
    const pool = new GpuPool({ vendor: 'nvidia', devices: ['0', '1', '2', '3'] });
    const a = pool.take(2);
    const b = pool.take(2);
    expect(a).toEqual(['0', '1']);
    expect(b).toEqual(['2', '3']);
    expect(pool.take(1)).toBeUndefined();
    pool.give(a ?? []);
    pool.give(a ?? []);
    expect(pool.freeCount).toBe(2);
    expect(pool.take(2)).toEqual(['0', '1']);
    expect(pool.variable).toBe('CUDA_VISIBLE_DEVICES');
    expect(new GpuPool({ vendor: 'amd', devices: ['0'] }).variable).toBe('HIP_VISIBLE_DEVICES');
  });
});

describe('CrashBackoff', () => {
  it('doubles up to the cap, blocks until then, turns unhealthy after start-up crashes, resets on a healthy start', () => {
    const backoff = new CrashBackoff({ baseMs: 100, maxMs: 300, unhealthyAfter: 2 });
    expect(backoff.recordCrash(1_000, true)).toBe(100);
    expect(backoff.blocked(1_050)).toBe(true);
    expect(backoff.blocked(1_100)).toBe(false);
    expect(backoff.unhealthy).toBe(false);
    expect(backoff.recordCrash(2_000, true)).toBe(200);
    expect(backoff.unhealthy).toBe(true);
    expect(backoff.recordCrash(3_000, false)).toBe(300);
    expect(backoff.recordCrash(4_000, false)).toBe(300);
    backoff.recordHealthyStart();
    expect(backoff.unhealthy).toBe(false);
    expect(backoff.blocked(4_001)).toBe(false);
    expect(backoff.recordCrash(5_000, false)).toBe(100);
  });
});

describe('launchEnv', () => {
  it('template env, worker API variables, its own id, GPU and CPU counts, its devices only', () => {
    const env = launchEnv({
      url: 'http://127.0.0.1:8000',
      apiKey: 'k',
      endpoint: { id: 'ep1', computeType: 'GPU', vcpuCount: 2 },
      template: { env: { MODEL: 'tiny', RUNPOD_POD_ID: 'not-this' } },
      workerId: 'ep1-7',
      gpus: ['GPU-a', 'GPU-b'],
      pool: { variable: 'CUDA_VISIBLE_DEVICES' },
      base: { PATH: '/bin', CUDA_VISIBLE_DEVICES: '0,1,2,3' },
    });
    expect(env).toMatchObject({
      PATH: '/bin',
      MODEL: 'tiny',
      RUNPOD_POD_ID: 'ep1-7',
      RUNPOD_ENDPOINT_ID: 'ep1',
      RUNPOD_AI_API_KEY: 'k',
      RUNPOD_WEBHOOK_GET_JOB: 'http://127.0.0.1:8000/v2/ep1/job-take/$ID?',
      RUNPOD_GPU_COUNT: '2',
      CUDA_VISIBLE_DEVICES: 'GPU-a,GPU-b',
    });
    const cpu = launchEnv({
      url: 'http://127.0.0.1:8000',
      endpoint: { id: 'ep2', computeType: 'CPU', vcpuCount: 4 },
      template: { env: {} },
      workerId: 'ep2-1',
      gpus: [],
      pool: { variable: 'HIP_VISIBLE_DEVICES' },
      base: {},
    });
    expect(cpu).toMatchObject({ RUNPOD_CPU_COUNT: '4', RUNPOD_GPU_COUNT: '0', HIP_VISIBLE_DEVICES: '' });
  });
});

describe('WorkerLogs', () => {
  it('keeps the last lines per endpoint, filtered by worker', () => {
    const logs = new WorkerLogs(3);
    for (let i = 0; i < 5; i++) logs.add('ep', { at: i, workerId: i % 2 === 0 ? 'a' : 'b', stream: 'stdout', line: `line ${i}` });
    expect(logs.read('ep').map((entry) => entry.line)).toEqual(['line 2', 'line 3', 'line 4']);
    expect(logs.read('ep', 10, 'a').map((entry) => entry.line)).toEqual(['line 2', 'line 4']);
    expect(logs.read('other')).toEqual([]);
  });
});

describe('flag parsers', () => {
  it('--image NAME=COMMAND splits at the first "="', () => {
    expect(parseImageFlag('me/w:1=node w.js --x=1')).toEqual(['me/w:1', { command: 'node w.js --x=1' }]);
    expect(() => parseImageFlag('me/w:1')).toThrow('--image expects NAME=COMMAND');
    expect(() => parseImageFlag('=node')).toThrow('--image expects NAME=COMMAND');
  });

  it('--gpus lists, with a vendor, or none', () => {
    expect(parseGpuList('0,1, 2')).toEqual({ vendor: 'nvidia', devices: ['0', '1', '2'] });
    expect(parseGpuList('amd:0,1')).toEqual({ vendor: 'amd', devices: ['0', '1'] });
    expect(parseGpuList('none')).toBeNull();
    expect(() => parseGpuList(',')).toThrow('--gpus expects a list');
  });
});
