/**
 * The launcher's small parts on their own: GPU pool (never shares a device, gives
 * back), crash backoff (doubling, capped, unhealthy after start-up crashes, reset),
 * the worker environment and launch key, the scaler's bounded queue read, job activity
 * from store events (last job time, each wait counted once), the
 * per-endpoint log ring, and the --image / --gpus parsers.
 */
import { describe, expect, it } from 'vitest';
import { parseGpuList } from '../../../packages/platform/src/cli/harness-launcher.js';
import {
  CrashBackoff,
  GpuPool,
  WorkerLogs,
  launchEnv,
  launchKey,
  parseImageFlag,
  queueSnapshot,
  readQueue,
  sampleSize,
} from '../../../packages/platform/src/harness/launcher/index.js';
import { Harness, ManualClock } from '../../../src/harness/index.js';
import { JobActivity } from '../../../packages/platform/src/harness/launcher/job-activity.js';
import type { LaunchedWorker } from '../../../packages/platform/src/harness/launcher/launched-worker.js';
import type { JobWait } from '../../../packages/platform/src/harness/launcher/queue-snapshot.js';
import type { ListQuery, StoredJob } from '../../../src/harness/store/job-store.js';

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
    // Past twice the limit (when the kept lines are trimmed) and between trims: still the last 3.
    for (let i = 5; i < 21; i++) {
      logs.add('ep', { at: i, workerId: 'a', stream: 'stdout', line: `line ${i}` });
      expect(logs.read('ep').map((entry) => entry.line)).toEqual([i - 2, i - 1, i].map((n) => `line ${n}`));
    }
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

describe('launchKey', () => {
  const endpoint = { version: 1, templateId: 't1', computeType: 'GPU' as const, gpuCount: 1, vcpuCount: 2 };
  const template = { imageName: 'me/w:1', env: { A: '1', B: '2' } };
  const image = { command: 'node w.js' };
  const key = launchKey(endpoint, template, image);

  it('changes with what a worker runs with: release, gpuCount, compute type, env, command', () => {
    expect(launchKey({ ...endpoint, version: 2 }, template, image)).not.toBe(key);
    expect(launchKey({ ...endpoint, gpuCount: 2 }, template, image)).not.toBe(key);
    expect(launchKey({ ...endpoint, computeType: 'CPU' }, template, image)).not.toBe(key);
    expect(launchKey(endpoint, { ...template, env: { A: '1', B: '3' } }, image)).not.toBe(key);
    expect(launchKey(endpoint, template, { command: 'node w2.js' })).not.toBe(key);
  });

  it('does not change with env order, or with vcpuCount on a GPU endpoint', () => {
    expect(launchKey(endpoint, { ...template, env: { B: '2', A: '1' } }, image)).toBe(key);
    expect(launchKey({ ...endpoint, vcpuCount: 8 }, template, image)).toBe(key);
    const cpu = { ...endpoint, computeType: 'CPU' as const };
    expect(launchKey({ ...cpu, vcpuCount: 8 }, template, image)).not.toBe(launchKey(cpu, template, image));
  });
});

describe('the scaler queue read', () => {
  it('reads as many jobs as can change the decision, 20 to 1000', () => {
    expect(sampleSize({ scalerType: 'REQUEST_COUNT', scalerValue: 2, workersMax: 3 })).toBe(20);
    expect(sampleSize({ scalerType: 'REQUEST_COUNT', scalerValue: 4, workersMax: 100 })).toBe(400);
    expect(sampleSize({ scalerType: 'REQUEST_COUNT', scalerValue: 100, workersMax: 100 })).toBe(1_000);
    expect(sampleSize({ scalerType: 'QUEUE_DELAY', scalerValue: 4, workersMax: 30 })).toBe(60);
  });

  it('counts jobs beyond the sample as normal and as old as the oldest read; lowPriority running jobs left out', () => {
    const job = (queuedAt: number, lowPriority = false): StoredJob =>
      ({ queuedAt, request: { input: {}, ...(lowPriority ? { policy: { lowPriority } } : {}) } }) as unknown as StoredJob;
    const snapshot = queueSnapshot(5, [job(300, true), job(200)], 3, [job(50, true), job(60)]);
    expect(snapshot.queued).toEqual([
      { queuedAt: 300, lowPriority: true },
      { queuedAt: 200, lowPriority: false },
      { queuedAt: 200, lowPriority: false },
      { queuedAt: 200, lowPriority: false },
      { queuedAt: 200, lowPriority: false },
    ]);
    expect(snapshot.runningJobs).toBe(2);
  });

  it('asks the store for bounded pages of queued (and for REQUEST_COUNT running) jobs only', async () => {
    const harness = new Harness();
    const jobs = harness.endpoint('ep');
    for (let i = 0; i < 50; i++) await jobs.submit({ input: { i } });
    const queries: ListQuery[] = [];
    const recording = { list: (query: ListQuery) => (queries.push(query), jobs.list(query)) };
    const delay = await readQueue(recording, { scalerType: 'QUEUE_DELAY', scalerValue: 4, workersMax: 3 });
    expect(queries).toEqual([{ states: ['IN_QUEUE'], offset: 0, limit: 20 }]);
    expect(delay.queued).toHaveLength(40);
    queries.length = 0;
    const count = await readQueue(recording, { scalerType: 'REQUEST_COUNT', scalerValue: 2, workersMax: 3 });
    expect(queries.map((query) => query.states)).toEqual([['IN_QUEUE'], ['IN_PROGRESS']]);
    expect(queries.every((query) => query.limit === 20)).toBe(true);
    expect(count.runningJobs).toBe(0);
    await harness.close();
  });
});

describe('JobActivity', () => {
  it('stamps a launched worker at each take and end, and counts the wait of each job it takes once', async () => {
    const clock = new ManualClock();
    const harness = new Harness({ clock });
    const jobs = harness.endpoint('ep');
    const worker = { id: 'w1', lastJobAt: undefined, heldSeen: new Set<string>() } as unknown as LaunchedWorker;
    const waits: JobWait[] = [];
    const activity = new JobActivity({
      store: harness.store,
      clock,
      workersOf: (endpointId) => (endpointId === 'ep' ? new Map([[worker.id, worker]]) : undefined),
      onWait: (_endpointId, wait) => waits.push(wait),
      onError: (error) => {
        throw error;
      },
    });
    activity.start();
    activity.watch(jobs);
    const queued = await jobs.submit({ input: { n: 1 } });
    await jobs.submit({ input: { n: 2 } });
    clock.advance(700);
    const [taken] = await jobs.tryTake('w1', 1);
    expect(worker.lastJobAt).toBe(clock.now());
    await new Promise((resolve) => setImmediate(resolve));
    expect(waits).toEqual([{ jobId: queued.id, workerId: 'w1', waitMs: 700 }]);
    expect(taken?.id).toBe(queued.id);

    clock.advance(300);
    await jobs.complete(queued.id, 'w1', { kind: 'output', output: 1 }, taken?.attempt);
    expect(worker.lastJobAt).toBe(clock.now());
    await new Promise((resolve) => setImmediate(resolve));
    // A worker this launcher did not start is not followed.
    await jobs.tryTake('someone-else', 1);
    await new Promise((resolve) => setImmediate(resolve));
    expect(waits).toHaveLength(1);
    activity.close();
    await harness.close();
  });
});
