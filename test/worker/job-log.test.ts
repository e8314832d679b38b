/**
 * The job-finished log line: by default at debug with one info summary line per
 * interval; with logEveryJob one info line per job; a failed job is always a warning
 * carrying its job id.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Harness } from '../../src/harness/index.js';
import { parseJobRequest } from '../../src/job/index.js';
import { startLocalWorker, type LocalWorker } from '../../src/local/local-worker.js';
import { resolveOptions, type Handler } from '../../src/worker/index.js';
import { captureLogs } from '../transports/platform/log-capture.js';
import { waitFor } from '../transports/wait-for.js';

let local: LocalWorker | undefined;

afterEach(async () => {
  await local?.stop();
  local?.harness.close();
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
  it('by default: no info line per job, one summary line per interval, a warning with the id of a failed job', async () => {
    const logs = captureLogs('info');
    local = startLocalWorker(handler, resolveOptions({ gpuSampling: false, jobSummaryIntervalMs: 200 }), logs.logger, { harness: new Harness() });
    const ids = await runJobs(local, [{}, {}, {}, { fail: true }]);
    const summary = await waitFor(() => logs.find('job(s) finished in the last')[0], 'the summary line', 5_000);
    expect(summary).toMatchObject({ level: 30, jobs: 4, ends: { completed: 3, failed: 1 } });
    expect(logs.find('job finished')).toEqual([]);
    const failed = logs.find('job failed', 40);
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ requestId: ids[3], end: 'failed', error: expect.stringContaining('asked to fail') });
    // One line for four jobs, not one each.
    expect(logs.find('job(s) finished')).toHaveLength(1);
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
