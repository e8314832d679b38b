import { afterEach, describe, expect, it } from 'vitest';
import { Harness } from '../../src/harness/index.js';
import { parseJobRequest } from '../../src/job/index.js';
import { startLocalWorker, type LocalWorker } from '../../src/local/local-worker.js';
import { createLogger } from '../../src/log/index.js';
import { createMetrics } from '../../src/metrics/index.js';
import type { GpuSampler, GpuWindowSummary } from '../../src/gpu/index.js';
import type { Job } from '../../src/job/index.js';
import { createJobTelemetry, resolveOptions } from '../../src/worker/index.js';
import type { RunOutcome } from '../../src/worker/job-run.js';
import { captureLogs } from '../transports/platform/log-capture.js';

const silent = createLogger({ level: 'silent' });
let local: LocalWorker | undefined;

afterEach(async () => {
  await local?.stop();
  await local?.harness.close();
  local = undefined;
});

describe('worker metrics', () => {
  it('counts jobs by final status, durations, stream chunks and bytes', async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    local = startLocalWorker(
      async function* (job) {
        if ((job.input as { fail?: boolean }).fail) throw new Error('no');
        yield 'abc';
        yield 'de';
      },
      resolveOptions({ gpuSampling: false }),
      silent,
      { harness: new Harness(), metrics },
    );
    for (const input of [{}, {}, { fail: true }]) {
      const { id } = await local.endpoint.submit(parseJobRequest({ input }));
      await local.endpoint.waitForEnd(id, 10_000);
    }
    // The runtime records a job just after the harness sees its result.
    for (let i = 0; i < 100 && local.runtime.running > 0; i++) await new Promise((r) => setTimeout(r, 5));
    const text = await metrics.registry.metrics();
    expect(text).toMatch(/serverless_worker_jobs_total\{status="COMPLETED"\} 2/);
    expect(text).toMatch(/serverless_worker_jobs_total\{status="FAILED"\} 1/);
    expect(text).toMatch(/serverless_worker_job_duration_seconds_count\{status="COMPLETED"\} 2/);
    expect(text).toMatch(/serverless_worker_jobs_in_progress 0/);
    expect(text).toMatch(/serverless_worker_stream_chunks_total 4/);
    // "abc" and "de" serialize to 5 and 4 bytes; two jobs.
    expect(text).toMatch(/serverless_worker_stream_bytes_total 18/);
  });
});

describe('two attempts of one job on one worker', () => {
  it('each run gets its own GPU window, and its end line names its attempt', () => {
    const logs = captureLogs('info');
    const summaries = [1, 2].map((samples): GpuWindowSummary => ({
      samples,
      peakUtilizationPercent: samples * 10,
      meanUtilizationPercent: samples * 5,
      peakMemoryUsedBytes: samples * 1_000,
      perGpu: [],
    }));
    let opened = 0;
    const sampler = {
      beginWindow: () => {
        const summary = summaries[opened++];
        return { end: () => summary };
      },
    } as unknown as GpuSampler;
    const telemetry = createJobTelemetry({ logger: logs.logger, sampler, logEveryJob: true });
    const attempt1: Job = { id: 'j1', input: {}, attempt: 1 };
    const attempt2: Job = { id: 'j1', input: {}, attempt: 2 };
    const outcome = (end: RunOutcome['end']): RunOutcome => ({ end, unresponsive: false, chunks: 0, streamBytes: 0, durationMs: 1 });
    // Attempt 1 ignored its abort and still runs when the same worker takes attempt 2; it ends first.
    telemetry.onJobStart(attempt1);
    telemetry.onJobStart(attempt2);
    telemetry.onJobEnd(attempt1, outcome('stale_attempt'));
    telemetry.onJobEnd(attempt2, outcome('completed'));
    const ends = logs.lines.filter((line) => line.requestId === 'j1' && 'end' in line);
    expect(ends.map((line) => [line.attempt, line.end, (line.gpu as { samples?: number } | undefined)?.samples])).toEqual([
      [1, 'stale_attempt', 1],
      [2, 'completed', 2],
    ]);
  });
});
