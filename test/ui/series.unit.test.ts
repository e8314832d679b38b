/**
 * The dashboard's chart series (src/harness/dashboard/series.ts): nearest-rank
 * percentiles, one point per interval with jobs and failures per second, queue wait and
 * execution percentiles and GPU figures, the ring of `historyMinutes`, and the history
 * rebuilt from kept jobs when the first page opens. Plain data, no server.
 */
import { describe, expect, it } from 'vitest';
import type { GpuReadResult } from '../../src/gpu/reading.js';
import { Series, percentile } from '../../packages/platform/src/harness/dashboard/series.js';
import type { StoredJob } from '../../src/harness/store/job-store.js';

const T0 = 1_700_000_000_000;

/** An ended job: queued at `queuedAt`, started after `delay` ms, ran `exec` ms (no start when `delay` is undefined). */
function ended(status: StoredJob['status'], queuedAt: number, delay: number | undefined, exec = 0): StoredJob {
  const startedAt = delay === undefined ? undefined : queuedAt + delay;
  return {
    id: `job-${queuedAt}-${delay ?? 'x'}-${exec}`,
    endpointId: 'e',
    request: { input: {} },
    sync: false,
    status,
    submittedAt: queuedAt,
    queuedAt,
    ...(startedAt !== undefined ? { startedAt, endedAt: startedAt + exec } : {}),
    retries: 0,
    attempt: startedAt === undefined ? 0 : 1,
    lost: 0,
    chunkCount: 0,
    unreadChunkCount: 0,
    expiresAt: queuedAt + 86_400_000,
    retentionMs: 1_800_000,
  };
}

const gpuRead = (util: number | null, used: number): GpuReadResult => ({
  ok: true,
  vendor: 'nvidia',
  tool: 'nvidia-smi',
  hidden: 0,
  readAt: T0,
  gpus: [
    {
      vendor: 'nvidia',
      index: 0,
      uuid: 'GPU-0',
      name: 'Card',
      utilizationPercent: util,
      memoryUtilizationPercent: null,
      memoryUsedBytes: used,
      memoryTotalBytes: 80 * 2 ** 30,
      temperatureCelsius: 40,
      powerDrawWatts: 100,
      powerLimitWatts: 300,
      driverVersion: '550',
    },
  ],
});

describe('percentile (nearest rank)', () => {
  it('is null for no values and the value itself for one', () => {
    expect(percentile([], 0.5)).toBeNull();
    expect(percentile([7], 0)).toBe(7);
    expect(percentile([7], 0.5)).toBe(7);
    expect(percentile([7], 1)).toBe(7);
  });

  it('answers the value at rank ceil(p * n) of sorted values, clamped to the ends', () => {
    const hundred = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(percentile(hundred, 0.5)).toBe(50);
    expect(percentile(hundred, 0.95)).toBe(95);
    expect(percentile(hundred, 0.99)).toBe(99);
    expect(percentile(hundred, 1)).toBe(100);
    expect(percentile(hundred, 0)).toBe(1);
    // Four values: p50 is the 2nd, p95 and p99 the 4th (no interpolation).
    expect(percentile([10, 20, 30, 40], 0.5)).toBe(20);
    expect(percentile([10, 20, 30, 40], 0.95)).toBe(40);
    expect(percentile([10, 20, 30, 40], 0.99)).toBe(40);
  });
});

describe('Series', () => {
  it('closes an interval into jobs and failures per second, wait and execution percentiles, and the GPU cards', () => {
    const series = new Series(500, 10);
    series.jobEnded(ended('COMPLETED', T0, 10, 100));
    series.jobEnded(ended('COMPLETED', T0, 30, 300));
    series.jobEnded(ended('FAILED', T0, 20, 200));
    series.jobEnded(ended('TIMED_OUT', T0, 40, 400));
    // Cancelled in the queue: counted as ended, with no wait or execution time.
    series.jobEnded(ended('CANCELLED', T0, undefined));
    const point = series.close(T0 + 500, gpuRead(42, 3 * 2 ** 30));
    expect(point).toEqual({
      t: T0 + 500,
      // 5 jobs in half a second.
      jobsPerSecond: 10,
      failedPerSecond: 4,
      delayP50: 20,
      delayP95: 40,
      delayP99: 40,
      execP50: 200,
      execP95: 400,
      execP99: 400,
      // The same figures for the one endpoint the jobs ended on.
      endpoints: { e: { jobsPerSecond: 10, failedPerSecond: 4, delayP50: 20, delayP95: 40, delayP99: 40, execP50: 200, execP95: 400, execP99: 400 } },
      gpus: [{ index: 0, name: 'Card', utilizationPercent: 42, memoryUsedBytes: 3 * 2 ** 30, memoryTotalBytes: 80 * 2 ** 30 }],
    });
    expect(series.points()).toEqual([point]);
  });

  it("keeps each endpoint's figures apart: only endpoints with a job ended in the interval are listed", () => {
    const series = new Series(1_000, 10);
    series.jobEnded(ended('COMPLETED', T0, 10, 100));
    series.jobEnded({ ...ended('FAILED', T0, 50, 500), endpointId: 'other' });
    const point = series.close(T0 + 1_000, undefined);
    expect(point).toMatchObject({ jobsPerSecond: 2, failedPerSecond: 1 });
    expect(point.endpoints.e).toMatchObject({ jobsPerSecond: 1, failedPerSecond: 0, delayP50: 10, execP50: 100 });
    expect(point.endpoints.other).toMatchObject({ jobsPerSecond: 1, failedPerSecond: 1, delayP50: 50, execP99: 500 });
    expect(series.close(T0 + 2_000, undefined).endpoints).toEqual({});
  });

  it('keeps the queue depths it is given with the point, and none on points rebuilt from the jobs kept', () => {
    const series = new Series(1_000, 10);
    expect(series.close(T0 + 1_000, undefined, { e: 7, other: 0 }).queued).toEqual({ e: 7, other: 0 });
    expect(series.close(T0 + 2_000, undefined)).not.toHaveProperty('queued');
    series.rebuild([ended('COMPLETED', T0, 5, 5)], T0 + 3_000);
    expect(series.points().every((point) => point.queued === undefined)).toBe(true);
  });

  it('starts each interval empty: null percentiles and no GPU cards without a reading (or with a failed one)', () => {
    const series = new Series(1_000, 10);
    series.jobEnded(ended('COMPLETED', T0, 5, 5));
    series.close(T0 + 1_000, undefined);
    const empty = series.close(T0 + 2_000, { ok: false, reason: 'not-installed', message: 'nvidia-smi: not found', attempts: [], readAt: T0 });
    expect(empty).toMatchObject({ jobsPerSecond: 0, failedPerSecond: 0, delayP50: null, execP99: null, gpus: [] });
    expect(series.points()).toHaveLength(2);
  });

  it('keeps historyMinutes of points: the oldest go first', () => {
    // 1 minute at 10 s intervals: 6 points.
    const series = new Series(10_000, 1);
    for (let i = 1; i <= 8; i++) series.close(T0 + i * 10_000, undefined);
    const times = series.points().map((p) => p.t);
    expect(times).toEqual([3, 4, 5, 6, 7, 8].map((i) => T0 + i * 10_000));
  });

  it('rebuilds the history from kept jobs: from the first interval with an ended job to now, jobs outside the window left out', () => {
    const series = new Series(1_000, 1);
    const now = T0 + 60_000;
    series.rebuild(
      [
        // Ended 2.5 s and 2.2 s before now: the interval (now-3 s, now-2 s].
        ended('COMPLETED', now - 3_000, 100, 400),
        ended('FAILED', now - 2_600, 200, 200),
        // Ended 0.5 s before now: the last interval.
        ended('COMPLETED', now - 1_000, 300, 200),
        // Ended before the window (over a minute ago), still queued, or after now: left out.
        ended('COMPLETED', T0 - 5_000, 10, 10),
        { ...ended('IN_QUEUE', now - 1_000, undefined), status: 'IN_QUEUE' },
        ended('COMPLETED', now, 10, 500),
      ],
      now,
    );
    const points = series.points();
    expect(points.map((p) => p.t)).toEqual([now - 2_000, now - 1_000, now]);
    expect(points[0]).toMatchObject({ jobsPerSecond: 2, failedPerSecond: 1, delayP50: 100, delayP95: 200, execP50: 200, execP95: 400 });
    expect(points[1]).toMatchObject({ jobsPerSecond: 0, delayP50: null });
    expect(points[2]).toMatchObject({ jobsPerSecond: 1, delayP50: 300, execP50: 200 });
    // Rebuilt points carry no GPU cards (no reading is kept for the past).
    expect(points.every((p) => p.gpus.length === 0)).toBe(true);
  });

  it('rebuilds to no points when no kept job ended in the window, and counts new ends from an empty interval', () => {
    const series = new Series(1_000, 1);
    series.jobEnded(ended('COMPLETED', T0, 1, 1));
    series.rebuild([ended('COMPLETED', T0 - 120_000, 1, 1)], T0);
    expect(series.points()).toEqual([]);
    // The job counted before the rebuild is gone with the old interval.
    expect(series.close(T0 + 1_000, undefined).jobsPerSecond).toBe(0);
  });
});
