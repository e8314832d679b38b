/**
 * The job-finished log line: by default at debug with one info summary line per
 * interval; with logEveryJob one info line per job; a failed job is always a warning
 * carrying its job id.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Harness } from '../../src/harness/index.js';
import { parseJobRequest } from '../../src/job/index.js';
import { startLocalWorker, type LocalWorker } from '../../src/local/local-worker.js';
import { JobLogSummary, resolveOptions, type Handler, type RunOutcome } from '../../src/worker/index.js';
import { captureLogs } from '../transports/platform/log-capture.js';
import { waitFor } from '../kit/index.js';

let local: LocalWorker | undefined;

afterEach(async () => {
  await local?.stop();
  await local?.harness.close();
  local = undefined;
});

const handler: Handler<unknown> = (job) => {
  if ((job.input as { fail?: boolean }).fail) throw new Error('asked to fail');
  return { ok: true };
};

async function runJobs(worker: LocalWorker, inputs: readonly Record<string, unknown>[]): Promise<string[]> {
  const ids: string[] = [];
  for (const input of inputs) {
    const { id } = await worker.endpoint.submit(parseJobRequest({ input }));
    await worker.endpoint.waitForEnd(id, 10_000);
    ids.push(id);
  }
  // The runtime logs a job just after the harness sees its result.
  await waitFor(() => worker.runtime.running === 0, 'the runs to end', 5_000);
  return ids;
}

describe('job log lines', () => {
  it('by default: no info line per job, one summary line for the jobs of an interval, a warning with the id of a failed job', async () => {
    const logs = captureLogs('info');
    // The interval is longer than the test: the four jobs are summed in one line, written at
    // stop (the interval's own timer is tested with fake timers below; real time on a loaded
    // machine could split four jobs over two short intervals).
    local = startLocalWorker(handler, resolveOptions({ gpuSampling: false, jobSummaryIntervalMs: 600_000 }), logs.logger, { harness: new Harness() });
    const ids = await runJobs(local, [{}, {}, {}, { fail: true }]);
    expect(logs.find('job finished')).toEqual([]);
    const failed = logs.find('job failed', 40);
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ requestId: ids[3], end: 'failed', error: expect.stringContaining('asked to fail') });
    expect(logs.find('job(s) finished')).toEqual([]);
    await local.stop();
    // One line for four jobs, not one each.
    expect(logs.find('job(s) finished')).toHaveLength(1);
    expect(logs.find('job(s) finished in the last')[0]).toMatchObject({ level: 30, jobs: 4, ends: { completed: 3, failed: 1 } });
  });

  it('the summary line comes once per interval in which jobs ended, and no timer runs while none does', () => {
    vi.useFakeTimers();
    try {
      const logs = captureLogs('info');
      const summary = new JobLogSummary(logs.logger, { intervalMs: 200 });
      const outcome = (end: RunOutcome['end'], durationMs: number): RunOutcome => ({ end, unresponsive: false, chunks: 0, streamBytes: 0, durationMs });
      summary.add(outcome('completed', 4));
      summary.add(outcome('completed', 6));
      vi.advanceTimersByTime(150);
      summary.add(outcome('failed', 2));
      vi.advanceTimersByTime(49);
      expect(logs.find('job(s) finished')).toEqual([]);
      vi.advanceTimersByTime(1);
      expect(logs.find('job(s) finished')).toHaveLength(1);
      expect(logs.find('job(s) finished')[0]).toMatchObject({ jobs: 3, ends: { completed: 2, failed: 1 }, maxDurationMs: 6 });
      // Nothing ends: no line and no timer.
      expect(vi.getTimerCount()).toBe(0);
      vi.advanceTimersByTime(1_000);
      expect(logs.find('job(s) finished')).toHaveLength(1);
      summary.add(outcome('completed', 1));
      vi.advanceTimersByTime(200);
      expect(logs.find('job(s) finished')).toHaveLength(2);
      expect(logs.find('job(s) finished')[1]).toMatchObject({ jobs: 1, ends: { completed: 1 } });
    } finally {
      vi.useRealTimers();
    }
  });

  it('writes the per-job line at debug when debug is on, and the summary of the last jobs at stop', async () => {
    const logs = captureLogs('debug');
    local = startLocalWorker(handler, resolveOptions({ gpuSampling: false }), logs.logger, { harness: new Harness() });
    const ids = await runJobs(local, [{}, {}]);
    expect(logs.find('job finished').map((line) => [line.level, line.requestId])).toEqual(ids.map((id) => [20, id]));
    expect(logs.find('job(s) finished')).toEqual([]);
    await local.stop();
    expect(logs.find('job(s) finished')[0]).toMatchObject({ level: 30, jobs: 2, ends: { completed: 2 } });
  });

  it('logEveryJob: one info line per job with its id and duration, and no summary', async () => {
    const logs = captureLogs('info');
    local = startLocalWorker(handler, resolveOptions({ gpuSampling: false, logEveryJob: true, jobSummaryIntervalMs: 100 }), logs.logger, {
      harness: new Harness(),
    });
    const ids = await runJobs(local, [{}, {}, {}]);
    const lines = logs.find('job finished');
    expect(lines.map((line) => line.requestId)).toEqual(ids);
    for (const line of lines) expect(line).toMatchObject({ level: 30, end: 'completed', durationMs: expect.any(Number) });
    await local.stop();
    expect(logs.find('job(s) finished')).toEqual([]);
  });
});
