/**
 * The scaler's pure decision: workersMin kept warm, workersMax never passed,
 * REQUEST_COUNT and QUEUE_DELAY, lowPriority jobs ignored for scale-up, idle workers
 * stopped after idleTimeout down to what is wanted, GPU throttling, crash backoff.
 */
import { describe, expect, it } from 'vitest';
import { decideScaling, type ScaleInput, type WorkerSnapshot } from '../../../packages/platform/src/harness/launcher/index.js';

const NOW = 1_000_000;

function input(extra: Partial<ScaleInput> = {}, settings: Partial<ScaleInput['settings']> = {}): ScaleInput {
  return {
    settings: { workersMin: 0, workersMax: 3, scalerType: 'REQUEST_COUNT', scalerValue: 2, idleTimeout: 5, ...settings },
    now: NOW,
    queued: [],
    runningJobs: 0,
    workers: [],
    startable: Number.POSITIVE_INFINITY,
    startBlocked: false,
    ...extra,
  };
}

const queued = (count: number, waitedMs = 0, lowPriority = false) => Array.from({ length: count }, () => ({ queuedAt: NOW - waitedMs, lowPriority }));
const idle = (id: string, idleForMs: number): WorkerSnapshot => ({ id, state: 'idle', idleSince: NOW - idleForMs });

describe('decideScaling', () => {
  it('keeps workersMin warm with an empty queue', () => {
    expect(decideScaling(input({}, { workersMin: 2 }))).toEqual({ desired: 2, start: 2, throttled: 0, stop: [] });
  });

  it('REQUEST_COUNT: one worker per scalerValue queued or running jobs, capped at workersMax', () => {
    expect(decideScaling(input({ queued: queued(3) })).start).toBe(2);
    expect(decideScaling(input({ queued: queued(20) }))).toMatchObject({ desired: 3, start: 3 });
    const running: WorkerSnapshot[] = [{ id: 'a', state: 'running' }];
    expect(decideScaling(input({ queued: queued(1), runningJobs: 1, workers: running })).start).toBe(0);
  });

  it('QUEUE_DELAY: the first job starts a worker; more only for jobs that waited longer than scalerValue s', () => {
    const settings = { scalerType: 'QUEUE_DELAY' as const, scalerValue: 4 };
    expect(decideScaling(input({ queued: queued(5) }, settings)).start).toBe(1);
    const one: WorkerSnapshot[] = [{ id: 'a', state: 'running' }];
    expect(decideScaling(input({ queued: queued(5, 3_000), workers: one }, settings)).start).toBe(0);
    expect(decideScaling(input({ queued: queued(5, 4_500), workers: one }, settings)).start).toBe(2);
    // Workers already starting count against the overdue jobs.
    const starting: WorkerSnapshot[] = [...one, { id: 'b', state: 'initializing' }];
    expect(decideScaling(input({ queued: queued(1, 4_500), workers: starting }, settings)).start).toBe(0);
  });

  it('lowPriority jobs never cause a scale-up', () => {
    expect(decideScaling(input({ queued: queued(10, 60_000, true) })).start).toBe(0);
    expect(decideScaling(input({ queued: queued(10, 60_000, true) }, { scalerType: 'QUEUE_DELAY', scalerValue: 1 })).start).toBe(0);
  });

  it('stops workers idle for idleTimeout, longest idle first, never below workersMin', () => {
    const workers = [idle('a', 6_000), idle('b', 9_000), idle('c', 1_000)];
    expect(decideScaling(input({ workers })).stop).toEqual(['b', 'a']);
    expect(decideScaling(input({ workers }, { workersMin: 2 })).stop).toEqual(['b']);
    expect(decideScaling(input({ workers }, { scalerType: 'QUEUE_DELAY', scalerValue: 1 })).stop).toEqual(['b', 'a']);
    // Jobs waiting: an idle worker is about to take one, none stops.
    expect(decideScaling(input({ workers, queued: queued(6) })).stop).toEqual([]);
  });

  it('workers that cannot get GPUs are throttled; a crash backoff starts nothing', () => {
    expect(decideScaling(input({ queued: queued(20), startable: 2 }))).toMatchObject({ start: 2, throttled: 1 });
    expect(decideScaling(input({ queued: queued(20), startBlocked: true }))).toMatchObject({ start: 0, throttled: 0 });
  });
});
