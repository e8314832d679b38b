/**
 * The next take on a result post (issue 47 item 6), only where the platform's job-take
 * answer advertised it (`x-sw-take-on-done: 1`, our harness). Against a platform that
 * does not (the real one) the result post is byte for byte as before and takes nothing.
 * Where it did, a take made right after the result rides on the result post's first
 * attempt; a first attempt that fails leaves the take to a job-take, and the post's
 * retry carries no take. The worker runtime with the platform transport against a
 * scripted server on 127.0.0.1 that hands out one job.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { TAKE_ON_DONE_HEADER } from '../../../src/job/take-on-done.js';
import type { WorkerRuntime } from '../../../src/worker/index.js';
import { waitFor, within } from '../../kit/index.js';
import { platformTransportAt, runOneJob, startOneJobPlatform } from '../../kit/platform-worker.js';
import { captureLogs } from './log-capture.js';
import { json, type ScriptedAnswer, type ScriptedServer } from './scripted-server.js';

let server: ScriptedServer | undefined;
let runtime: WorkerRuntime | undefined;

afterEach(async () => {
  await runtime?.stop();
  runtime = undefined;
  await server?.close();
  server = undefined;
});

async function runJob(takeHeaders: Record<string, string>, done?: () => ScriptedAnswer) {
  server = await startOneJobPlatform({ takeHeaders, ...(done ? { done } : {}) });
  const logs = captureLogs();
  const transport = platformTransportAt(server.origin, { logger: logs.logger, retryMinDelayMs: 5, retryMaxDelayMs: 20 });
  const run = runOneJob(() => ({ ok: true }), transport, logs.logger);
  runtime = run.runtime;
  const outcome = await within(run.outcome, 'the run to end', 30_000);
  return { outcome, server };
}

describe('the next take on a result post', () => {
  it('posts the result byte for byte as before, and takes with job-take, against a platform that advertises nothing (the real one)', async () => {
    const { outcome, server } = await runJob({});
    expect(outcome).toMatchObject({ end: 'completed' });
    const dones = server.to('/job-done/');
    expect(dones.map((request) => `${request.method} ${request.url} ${request.body}`)).toEqual([
      'POST /v2/ep/job-done/w1/j1?isStream=false&attempt=1 {"output":{"ok":true}}',
    ]);
    await waitFor(() => server.to('/job-take/').length >= 2, 'the next job-take');
  });

  it('adds take=1 and job_in_progress to the result post where the job-take answer advertised it', async () => {
    const { outcome, server } = await runJob({ [TAKE_ON_DONE_HEADER]: '1' });
    expect(outcome).toMatchObject({ end: 'completed' });
    const dones = server.to('/job-done/');
    expect(dones.map((request) => `${request.method} ${request.url} ${request.body}`)).toEqual([
      'POST /v2/ep/job-done/w1/j1?isStream=false&attempt=1&take=1&job_in_progress=1 {"output":{"ok":true}}',
    ]);
    // Its answer handed out no job: the worker polls job-take as before.
    await waitFor(() => server.to('/job-take/').length >= 2, 'the next job-take');
  });

  it('takes with job-take when the result post that carried the take failed, and retries the post without it', async () => {
    let posts = 0;
    const { outcome, server } = await runJob({ [TAKE_ON_DONE_HEADER]: '1' }, () =>
      ++posts === 1 ? json({ error: 'busy' }, 503) : json({ acknowledged: true, applied: true }),
    );
    expect(outcome).toMatchObject({ end: 'completed' });
    expect(server.to('/job-done/').map((request) => request.url)).toEqual([
      '/v2/ep/job-done/w1/j1?isStream=false&attempt=1&take=1&job_in_progress=1',
      '/v2/ep/job-done/w1/j1?isStream=false&attempt=1',
    ]);
    await waitFor(() => server.to('/job-take/').length >= 2, 'the next job-take');
  });
});
