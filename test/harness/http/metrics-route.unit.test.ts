/**
 * GET /metrics: Prometheus text of the server's registry, with jobs counted by final
 * status as they end.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startTestWorker } from './helpers.js';
import { call, startTestServer, type TestServer } from '../../kit/index.js';

let running: TestServer | undefined;
let stopWorker: (() => Promise<void>) | undefined;

afterEach(async () => {
  await stopWorker?.();
  await running?.close();
  running = undefined;
  stopWorker = undefined;
});

describe('GET /metrics', () => {
  it('serves the registry as Prometheus text, with jobs by final status', async () => {
    running = await startTestServer();
    stopWorker = startTestWorker(running.harness, async (job: { input: { fail?: boolean } }) => {
      if (job.input.fail) throw new Error('asked to');
      return 'ok';
    }).stop;
    await call('POST', `${running.endpointUrl()}/runsync`, { body: { input: {} } });
    await call('POST', `${running.endpointUrl()}/runsync`, { body: { input: {} } });
    await call('POST', `${running.endpointUrl()}/runsync`, { body: { input: { fail: true } } });
    const answer = await call('GET', `${running.url}/metrics`);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toContain('text/plain');
    expect(answer.text).toContain('serverless_worker_jobs_total{status="COMPLETED"} 2');
    expect(answer.text).toContain('serverless_worker_jobs_total{status="FAILED"} 1');
    expect(answer.text).toContain('serverless_worker_job_duration_seconds_count{status="COMPLETED"} 2');
  });
});
