/**
 * Results posted in the background (src/worker/posting-runs.ts) by a real worker process
 * on the platform transport, against a scripted platform on 127.0.0.1 that holds one
 * job's result post: with concurrency 1 the worker takes and runs the next job while that
 * post is pending, its heartbeat keeps listing the job until the post is answered, and a
 * SIGTERM meanwhile waits for it: the post, answered 503 after the signal, is retried and
 * delivered, and the worker exits 0. Bounded waits only.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { workerEnvFor } from '../../packages/platform/src/harness/worker-api/index.js';
import { json, startScriptedServer, type ScriptedAnswer, type ScriptedServer } from '../transports/platform/scripted-server.js';
import { waitFor, within } from '../kit/index.js';
import { killAllWorkers, startWorkerProcess } from './worker-process.js';

// tsx compiles the worker at start: on a loaded 2-core machine that alone took over 30 s.
const START_BOUND_MS = 60_000;

let scripted: ScriptedServer | undefined;

afterEach(async () => {
  await killAllWorkers();
  await scripted?.close();
  scripted = undefined;
});

describe('a worker process whose result post is pending', () => {
  it('runs the next job meanwhile, lists the job in its heartbeat, and delivers the post after SIGTERM before exiting 0', { timeout: 120_000 }, async () => {
    const queue = ['j1', 'j2'];
    let releaseJ1: (answer: ScriptedAnswer) => void = () => undefined;
    const j1Held = new Promise<ScriptedAnswer>((resolve) => (releaseJ1 = resolve));
    let j1Posts = 0;
    scripted = await startScriptedServer((request) => {
      if (request.path.includes('/job-take')) {
        const id = queue.shift();
        return id === undefined ? { status: 204, delayMs: 300 } : json({ id, input: { tag: id } });
      }
      if (request.path.endsWith('/j1')) return ++j1Posts === 1 ? j1Held : json({});
      if (request.path.includes('/job-done/')) return json({});
      if (request.path.includes('/job-stop/')) return { status: 204, delayMs: 300 };
      return { status: 200 };
    });
    const server = scripted;
    const worker = startWorkerProcess('posting', { ...workerEnvFor(server.origin, 'ep', { pingIntervalMs: 100 }), LOG_LEVEL: 'info', TEST_CONCURRENCY: '1' });
    const done = (id: string): number => server.to('/job-done/').filter((request) => request.path.endsWith(`/${id}`)).length;
    await waitFor(() => done('j1') === 1, `j1's result post (stderr: ${worker.stderr().slice(-1_000)})`, START_BOUND_MS);
    // Concurrency 1, and j1's post still pending: j2 was taken, run and posted meanwhile.
    await waitFor(() => done('j2') === 1, `j2's result while j1's post is pending (stderr: ${worker.stderr().slice(-1_000)})`, 20_000);
    expect(worker.events.filter((event) => event.event === 'started').map((event) => event.jobId)).toEqual(['j1', 'j2']);
    // A heartbeat after j2's post still lists j1: the platform must not requeue it.
    const pingsBefore = server.to('/ping/').length;
    const listed = await waitFor(
      () =>
        server
          .to('/ping/')
          .slice(pingsBefore)
          .find((ping) => (ping.query.get('job_id') ?? '').split(',').includes('j1')),
      'a heartbeat listing j1 while its result is posted',
      20_000,
    );
    expect(listed.query.get('job_id')).toBe('j1');
    worker.signal('SIGTERM');
    await worker.waitForStderr('worker stopping', 20_000);
    // Answered only now, and with a 503: the retry goes out during the shutdown.
    releaseJ1({ status: 503, body: 'busy' });
    const exit = await within(worker.exited, 'the worker to exit after delivering j1', 30_000);
    expect(exit).toEqual({ code: 0, signal: null });
    expect(done('j1')).toBe(2);
    const posts = server.to('/job-done/').filter((request) => request.path.endsWith('/j1'));
    expect(posts.map((request) => JSON.parse(request.body) as unknown)).toEqual([
      { output: { workerId: 'posting', tag: 'j1' } },
      { output: { workerId: 'posting', tag: 'j1' } },
    ]);
    expect(worker.stderr()).toContain('result delivered after retries');
  });
});
