/**
 * The batch form of job-stream (issue 46 item 4), over HTTP on 127.0.0.1: job-take
 * answers advertise it (`x-sw-stream-batch: 64`); our worker yielding objects then sends
 * fewer posts than chunks, and /stream has every chunk once, in order, each its own item
 * with its own stream_index, even when a batch's answer is lost and the batch is posted
 * again. Raw posts: a batch is stored item by item (a repeat stores only what is
 * missing, an early batch waits for the chunks before it), and a bad item is refused
 * 400 SW_INVALID_STREAM_BATCH with nothing of the post stored.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { parseJobRequest } from '../../../../src/job/index.js';
import type { Handler, WorkerRuntime } from '../../../../src/worker/index.js';
import { within } from '../../../kit/index.js';
import { platformTransportAt, runOneJob } from '../../../kit/platform-worker.js';
import { captureLogs } from '../../../transports/platform/log-capture.js';
import { startWorkerApiServer, type RunningWorkerApi } from './worker-api-server.js';

const servers: RunningWorkerApi[] = [];
let runtime: WorkerRuntime | undefined;

afterEach(async () => {
  await runtime?.stop();
  runtime = undefined;
  for (const server of servers.splice(0)) await server.close();
});

const COUNT = 300;

const objects: Handler<unknown> = async function* () {
  for (let n = 0; n < COUNT; n++) yield { n, text: 'x'.repeat(64) };
};

/** Counts the job-stream posts and the chunks they carried; loses the answer of the first batch post once (after it was stored). */
function countingHooks() {
  const seen = { posts: 0, chunks: 0, batches: 0, dropped: 0 };
  const install = (app: FastifyInstance): void => {
    app.addHook('onSend', async (request, reply, payload) => {
      if (!request.url.includes('/job-stream/')) return payload;
      const body = JSON.parse(request.body as string) as unknown;
      seen.posts++;
      seen.chunks += Array.isArray(body) ? body.length : 1;
      if (Array.isArray(body) && seen.batches++ === 0 && reply.statusCode === 200) {
        seen.dropped++;
        reply.raw.socket?.destroy(); // stored, but its answer is lost: the worker posts the batch again
      }
      return payload;
    });
  };
  return { install, seen };
}

async function started(beforeRoutes?: (app: FastifyInstance) => void): Promise<RunningWorkerApi> {
  const server = await startWorkerApiServer({ longPollMs: 300, ...(beforeRoutes ? { beforeRoutes } : {}) });
  servers.push(server);
  return server;
}

describe('an SDK worker yielding objects, against the harness', () => {
  it('sends fewer posts than chunks; /stream has every chunk once, in order, though a batch answer was lost and the batch posted again', async () => {
    const hooks = countingHooks();
    const server = await started(hooks.install);
    const endpoint = server.harness.endpoint('ep');
    const { id } = await endpoint.submit(parseJobRequest({ input: {} }));
    const logs = captureLogs();
    const transport = platformTransportAt(server.origin, { logger: logs.logger, retryMinDelayMs: 5, retryMaxDelayMs: 20 });
    const run = runOneJob(objects, transport, logs.logger);
    runtime = run.runtime;
    expect(await within(run.outcome, 'the run to end', 30_000)).toMatchObject({ end: 'completed' });
    expect(transport.chunkBatch).toEqual({ perPost: 64, inFlight: 64 });
    expect(transport.chunkWindow).toBe(2);
    expect(hooks.seen.posts).toBeLessThan(COUNT);
    expect(hooks.seen.dropped).toBe(1);
    // The lost batch was posted twice: more chunks posted than the stream holds.
    expect(hooks.seen.chunks).toBeGreaterThan(COUNT);
    const { stream, status } = await endpoint.readStream(id);
    expect(status).toBe('COMPLETED');
    expect(stream.map((chunk) => (chunk.output as { n: number }).n)).toEqual(Array.from({ length: COUNT }, (_, n) => n));
    expect(stream.map((chunk) => chunk.metrics?.stream_index)).toEqual(Array.from({ length: COUNT }, (_, n) => n));
  });
});

describe('job-stream batches, raw', () => {
  async function held(): Promise<{ server: RunningWorkerApi; id: string; take: Response }> {
    const server = await started();
    const { id } = await server.harness.endpoint('ep').submit(parseJobRequest({ input: {} }));
    const take = await fetch(`${server.origin}/v2/ep/job-take/w1?job_in_progress=0`);
    await take.text();
    return { server, id, take };
  }
  const item = (index: number, extra: Record<string, unknown> = {}) => ({ output: { n: index }, metrics: { stream_index: index, ...extra } });
  const post = (server: RunningWorkerApi, id: string, body: unknown) =>
    fetch(`${server.origin}/v2/ep/job-stream/w1/${id}?isStream=false&attempt=1`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
  const streamOf = async (server: RunningWorkerApi, id: string) => (await server.harness.endpoint('ep').readStream(id)).stream;

  it('the take answer advertises batches of 64; a batch is stored as its items, metrics kept; the same batch again stores nothing more', async () => {
    const { server, id, take } = await held();
    expect(take.headers.get('x-sw-stream-batch')).toBe('64');
    const first = await post(server, id, [item(0, { tokens: 3 }), item(1), item(2)]);
    expect(await first.json()).toEqual({ acknowledged: true, applied: true, chunks: 3, stored: 3, duplicates: 0 });
    const again = await post(server, id, [item(0, { tokens: 3 }), item(1), item(2)]);
    expect(await again.json()).toEqual({ acknowledged: true, applied: false, reason: 'duplicate', chunks: 3, stored: 0, duplicates: 3 });
    const longer = await post(server, id, [item(1), item(2), item(3)]);
    expect(await longer.json()).toEqual({ acknowledged: true, applied: true, chunks: 3, stored: 1, duplicates: 2 });
    const stream = await streamOf(server, id);
    expect(stream.map((chunk) => chunk.output)).toEqual([{ n: 0 }, { n: 1 }, { n: 2 }, { n: 3 }]);
    // Each item's own metrics (the store adds the attempt, as for a chunk posted alone).
    expect(stream.map((chunk) => chunk.metrics)).toEqual([
      { stream_index: 0, tokens: 3, attempt: 1 },
      { stream_index: 1, attempt: 1 },
      { stream_index: 2, attempt: 1 },
      { stream_index: 3, attempt: 1 },
    ]);
  });

  it('a batch that comes before the chunks it follows waits for them: posted [2, 3] then [0, 1], stored 0 to 3', async () => {
    const { server, id } = await held();
    const later = post(server, id, [item(2), item(3)]);
    const first = await post(server, id, [item(0), item(1)]);
    expect(first.status).toBe(200);
    expect(await (await later).json()).toMatchObject({ applied: true, stored: 2 });
    expect((await streamOf(server, id)).map((chunk) => chunk.output)).toEqual([{ n: 0 }, { n: 1 }, { n: 2 }, { n: 3 }]);
  });

  const badBatches: Array<[string, unknown, Record<string, unknown>]> = [
    ['an empty array', [], { items: 0 }],
    ['65 items', Array.from({ length: 65 }, (_, n) => item(n)), { items: 65 }],
    ['an item without stream_index', [item(0), { output: 1, metrics: {} }], { item: 1 }],
    ['an item without metrics', [item(0), { output: 1 }], { item: 1 }],
    ['an item without output', [item(0), { metrics: { stream_index: 1 } }], { item: 1 }],
    ['an item with a key besides output and metrics', [item(0), { ...item(1), outptu: 2 }], { item: 1 }],
    ['an item that is not an object', [item(0), 'text'], { item: 1 }],
    ['a stream_index that is not a whole number', [{ output: 0, metrics: { stream_index: 0.5 } }], { item: 0 }],
    ['indexes that do not follow each other', [item(0), item(2)], { item: 1, streamIndex: 2, expected: 1 }],
    ['an item whose output is over 1 MiB', [item(0), { output: 'x'.repeat(1024 * 1024), metrics: { stream_index: 1 } }], { item: 1, limit: 1024 * 1024 }],
  ];
  for (const [what, body, details] of badBatches) {
    it(`refuses ${what}: 400 SW_INVALID_STREAM_BATCH naming it, nothing of the post stored`, async () => {
      const { server, id } = await held();
      const answer = await post(server, id, body);
      expect(answer.status).toBe(400);
      const error = ((await answer.json()) as { error: { code: string; message: string; details: Record<string, unknown> } }).error;
      expect(error.code).toBe('SW_INVALID_STREAM_BATCH');
      expect(error.message).toContain('nothing of the post was stored');
      expect(error.details).toMatchObject(details);
      expect(await streamOf(server, id)).toEqual([]);
    });
  }

  it('refuses a batch that is not JSON: 400 SW_INVALID_STREAM_BATCH', async () => {
    const { server, id } = await held();
    const answer = await post(server, id, '[{"output": 1,');
    expect(answer.status).toBe(400);
    expect(((await answer.json()) as { error: { code: string } }).error.code).toBe('SW_INVALID_STREAM_BATCH');
  });
});
