/**
 * The watchdog thread's decisions as plain functions: how long the main thread has
 * been blocked, whether the heartbeat claims the jobs, which jobs have passed their
 * deadline plus grace (by board slot), the verdicts each running job gets, and the
 * default of eventLoopBlockedMs.
 */
import { describe, expect, it } from 'vitest';
import { MIN_DEFAULT_UNCLAIM_MS, defaultBlockedUnclaimMs } from '../../../src/transports/platform/platform-watchdog.js';
import type { WatchedJob, WatchdogThreadData } from '../../../src/transports/watchdog/index.js';
import { blockedFor, claimsJobs, expiredSlots, jobName, verdicts } from '../../../src/transports/watchdog/thread-decisions.js';
import { resolveOptions } from '../../../src/worker/index.js';

const data: WatchdogThreadData = {
  board: new SharedArrayBuffer(8),
  timeoutGraceMs: 2_000,
  checkIntervalMs: 100,
  staleAfterMs: 1_000,
  exitWaitMs: 3_000,
  origin: { workerId: 'w-1', hostname: 'host-a', version: '9.9.9' },
  jsonLogs: true,
};

const job = (slot: number, id: string, deadlineAt: number, attempt?: number): WatchedJob => ({
  slot,
  id,
  deadlineAt,
  startedAt: deadlineAt - 5_000,
  ...(attempt !== undefined ? { attempt } : {}),
});

describe('blocked time and the heartbeat claim', () => {
  it('counts the blocked time from the last tick, never below 0', () => {
    expect(blockedFor(10_000, 12_500)).toBe(2_500);
    expect(blockedFor(10_000, 9_000)).toBe(0);
  });

  it('claims the jobs until the main thread has been blocked eventLoopBlockedMs, and never once fired', () => {
    expect(claimsJobs(0, 10_000, false)).toBe(true);
    expect(claimsJobs(9_999, 10_000, false)).toBe(true);
    expect(claimsJobs(10_000, 10_000, false)).toBe(false);
    expect(claimsJobs(60_000, 10_000, false)).toBe(false);
    // No bound (local modes, or no watchdog options): always, unless fired.
    expect(claimsJobs(3_600_000, undefined, false)).toBe(true);
    expect(claimsJobs(0, undefined, true)).toBe(false);
    expect(claimsJobs(0, 10_000, true)).toBe(false);
  });

  it('defaults eventLoopBlockedMs to 3 ping intervals, at least MIN_DEFAULT_UNCLAIM_MS', () => {
    expect(MIN_DEFAULT_UNCLAIM_MS).toBe(10_000);
    expect(defaultBlockedUnclaimMs(500)).toBe(10_000);
    expect(defaultBlockedUnclaimMs(3_333)).toBe(10_000);
    expect(defaultBlockedUnclaimMs(10_000)).toBe(30_000);
    // No eventLoopBlockedMs in the options unless set: the default above applies.
    expect(resolveOptions({}).eventLoopBlockedMs).toBeUndefined();
    expect(resolveOptions({ eventLoopBlockedMs: 4_000 }).eventLoopBlockedMs).toBe(4_000);
  });
});

describe('expired jobs and verdicts', () => {
  it('expires a job at its deadline plus the grace, not before, by slot', () => {
    const jobs = [job(0, 'a', 10_000), job(3, 'b', 20_000)];
    expect([...expiredSlots(jobs, 11_999, 2_000)]).toEqual([]);
    expect([...expiredSlots(jobs, 12_000, 2_000)]).toEqual([0]);
    expect([...expiredSlots(jobs, 30_000, 2_000)].sort()).toEqual([0, 3]);
  });

  it('times out the expired attempt only: another attempt of the same job is reported SW_WORKER_SHUTDOWN', () => {
    const stale = job(0, 'same', 10_000, 1);
    const current = job(1, 'same', 40_000, 2);
    const other = job(2, 'other', 50_000);
    const list = verdicts([stale, current, other], expiredSlots([stale, current, other], 12_500, data.timeoutGraceMs), 8_000, data);
    expect(list.map((verdict) => [verdict.job.slot, verdict.timedOut, verdict.error.error_code])).toEqual([
      [0, true, 'SW_EXECUTION_TIMEOUT'],
      [1, false, 'SW_WORKER_SHUTDOWN'],
      [2, false, 'SW_WORKER_SHUTDOWN'],
    ]);
    const [timedOut, shutDown, plain] = list;
    expect(timedOut?.error).toMatchObject({ worker_id: 'w-1', hostname: 'host-a', runtime_version: '9.9.9', error_type: 'ServerlessWorkerError' });
    expect(timedOut?.error.error_message).toBe(
      'Job same (attempt 1) ran past its execution timeout of 5000 ms plus the 2000 ms grace while its handler blocked the event loop (blocked for 8000 ms); the watchdog thread timed it out and this worker exits',
    );
    expect(shutDown?.error.error_message).toContain('job same (attempt 2) finished: another job blocked the event loop');
    expect(plain?.error.error_message).toContain('job other finished');
    expect(jobName(other)).toBe('other');
  });

  it('answers no verdict without jobs', () => {
    expect(verdicts([], new Set([0]), 5_000, data)).toEqual([]);
  });
});
