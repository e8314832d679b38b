import { afterEach, describe, expect, it } from 'vitest';
import { Harness } from '../../src/harness/index.js';
import { parseJobRequest } from '../../src/job/index.js';
import { startLocalWorker, type LocalWorker } from '../../src/local/local-worker.js';
import { createLogger } from '../../src/log/index.js';
import { createMetrics } from '../../src/metrics/index.js';
import { resolveOptions } from '../../src/worker/index.js';

const silent = createLogger({ level: 'silent' });
let local: LocalWorker | undefined;

afterEach(async () => {
  await local?.stop();
  local?.harness.close();
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
