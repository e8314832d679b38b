/**
 * Streams of objects through the harness's worker API with the SDK's chunk window
 * (issue 46 item 4), over HTTP on 127.0.0.1: job-take answers advertise ordering by
 * stream_index; our worker then keeps several job-stream posts in flight (counted on
 * the server, held until four are open at once), and /stream still reads every chunk
 * once, in order, even when a post's answer is lost and the post is retried; raw posts
 * out of order are stored in order; an index too far ahead is answered 400
 * SW_STREAM_INDEX_AHEAD.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { parseJobRequest, type Job } from '../../../../src/job/index.js';
import { createPlatformTransport } from '../../../../src/transports/platform/index.js';
import { WorkerRuntime, resolveOptions, type Handler } from '../../../../src/worker/index.js';
import type { RunOutcome } from '../../../../src/worker/job-run.js';
import { waitFor, within } from '../../../kit/index.js';
import { captureLogs } from '../../../transports/platform/log-capture.js';
import { startWorkerApiServer, type RunningWorkerApi } from './worker-api-server.js';

const servers: RunningWorkerApi[] = [];
let runtime: WorkerRuntime | undefined;
let releaseHeld: () => void = () => {};

afterEach(async () => {
  releaseHeld();
  await runtime?.stop();
  runtime = undefined;
  for (const server of servers.splice(0)) await server.close();
});

const COUNT = 40;

const objects: Handler<unknown> = async function* () {
  for (let n = 0; n < COUNT; n++) yield { n, text: 'x'.repeat(64) };
};

/** Counts the job-stream posts open at once; holds them until `holdUntil` are; drops the answer of the first post of `dropIndex` (after storing it). */
function streamHooks(holdUntil: number, dropIndex: number | undefined) {
  let open = 0;
  let most = 0;
  let released = false;
  let dropped = 0;
  const waiting: Array<() => void> = [];
  const release = (): void => {
    released = true;
    for (const go of waiting.splice(0)) go();
  };
  releaseHeld = release;
  const install = (app: FastifyInstance): void => {
    app.addHook('preHandler', async (request) => {
      if (!request.url.includes('/job-stream/')) return;
      open++;
      most = Math.max(most, open);
      if (released) return;
      if (open >= holdUntil) release();
      else await new Promise<void>((resolve) => waiting.push(resolve));
    });
    app.addHook('onSend', async (request, reply, payload) => {
      if (!request.url.includes('/job-stream/')) return payload;
      open--;
      const index = (JSON.parse(request.body as string) as { metrics?: { stream_index?: number } }).metrics?.stream_index;
      if (index === dropIndex && dropped++ === 0) reply.raw.socket?.destroy(); // stored, but its answer is lost: the worker retries
      return payload;
    });
  };
  return { install, most: () => most, dropped: () => dropped };
}

async function runWorker(server: RunningWorkerApi) {
  const logs = captureLogs();
  const env = server.envFor('ep');
  const transport = createPlatformTransport({
    processEnv: { ...env, RUNPOD_POD_ID: 'w1' },
    logger: logs.logger,
    heartbeat: false,
    emptyPollGapMs: 0,
    retryMinDelayMs: 5,
    retryMaxDelayMs: 20,
    // The window alone: with several chunks a post (the default against the harness) at most 2 posts are in flight (stream-batch.unit.test.ts).
    chunkBatch: 1,
  });
  let ended: (outcome: RunOutcome) => void = () => {};
  const outcome = new Promise<RunOutcome>((resolve) => (ended = resolve));
  runtime = new WorkerRuntime(objects, resolveOptions({ gpuSampling: false }), transport, logs.logger, {
    onJobEnd: (_job: Job, result: RunOutcome) => ended(result),
  });
  void runtime.start();
  return { transport, outcome };
}

describe('the SDK worker against the harness, with its chunk window', () => {
  it('keeps several posts in flight, and /stream has every chunk once, in order, though one answer was lost', async () => {
    const hooks = streamHooks(4, 5);
    const server = await startWorkerApiServer({ longPollMs: 300, beforeRoutes: hooks.install });
    servers.push(server);
    const endpoint = server.harness.endpoint('ep');
    const { id } = await endpoint.submit(parseJobRequest({ input: {} }));
    const worker = await runWorker(server);
    await waitFor(() => hooks.most() >= 4, 'four job-stream posts open at once on the server');
    expect(await within(worker.outcome, 'the run to end', 30_000)).toMatchObject({ end: 'completed' });
    expect(worker.transport.chunkWindow).toBe(16);
    expect(hooks.dropped()).toBeGreaterThanOrEqual(2); // the lost answer's post came again
    const { stream, status } = await endpoint.readStream(id);
    expect(status).toBe('COMPLETED');
    expect(stream.map((chunk) => (chunk.output as { n: number }).n)).toEqual(Array.from({ length: COUNT }, (_, n) => n));
    expect(stream.map((chunk) => chunk.metrics?.stream_index)).toEqual(Array.from({ length: COUNT }, (_, n) => n));
  });
});

describe('job-stream posts out of order, raw', () => {
  async function held(): Promise<{ server: RunningWorkerApi; id: string; take: Response }> {
    const server = await startWorkerApiServer({ longPollMs: 300 });
    servers.push(server);
    const { id } = await server.harness.endpoint('ep').submit(parseJobRequest({ input: {} }));
    const take = await fetch(`${server.origin}/v2/ep/job-take/w1?job_in_progress=0`);
    await take.text();
    return { server, id, take };
  }
  const post = (server: RunningWorkerApi, id: string, index: number) =>
    fetch(`${server.origin}/v2/ep/job-stream/w1/${id}?isStream=false&attempt=1`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ output: { n: index }, metrics: { stream_index: index } }),
    });

  it('the take answer advertises the ordering; chunks posted 2, 1, 0 are stored 0, 1, 2, each answered applied', async () => {
    const { server, id, take } = await held();
    expect(take.headers.get('x-sw-stream-order')).toBe('stream_index');
    const later = [post(server, id, 2), post(server, id, 1)];
    const first = await post(server, id, 0);
    expect(await first.json()).toEqual({ acknowledged: true, applied: true });
    for (const answer of await Promise.all(later)) expect(await answer.json()).toEqual({ acknowledged: true, applied: true });
    const { stream } = await server.harness.endpoint('ep').readStream(id);
    expect(stream.map((chunk) => chunk.output)).toEqual([{ n: 0 }, { n: 1 }, { n: 2 }]);
  });

  it('answers an index too far ahead 400 SW_STREAM_INDEX_AHEAD, naming the index and the one expected', async () => {
    const { server, id } = await held();
    const answer = await post(server, id, 1_000);
    expect(answer.status).toBe(400);
    const body = (await answer.json()) as { error: { code: string; message: string; details: Record<string, unknown> } };
    expect(body.error.code).toBe('SW_STREAM_INDEX_AHEAD');
    expect(body.error.message).toContain('stream_index 1000');
    expect(body.error.details).toMatchObject({ streamIndex: 1_000, expected: 0, maxAhead: 64 });
  });
});
