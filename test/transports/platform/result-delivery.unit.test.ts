/**
 * No result is lost: the harness's worker API answers job-done and job-stream with 503,
 * 429, resets connections before handling, and applies a post then resets the
 * connection (so the answer is lost and the worker posts again) — for the first
 * attempts of every post. A worker runtime on the platform transport still gets every
 * job COMPLETED exactly once, with every chunk stored once and in order.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { parseJobRequest, isServerlessWorkerError } from '../../../src/job/index.js';
import { createPlatformTransport, type PlatformTransport } from '../../../src/transports/platform/index.js';
import { WorkerRuntime, resolveOptions, type Handler } from '../../../src/worker/index.js';
import { startWorkerApiServer, type RunningWorkerApi } from '../../harness/http/worker-api/worker-api-server.js';
import { waitFor } from '../../kit/index.js';
import { captureLogs, countingMetrics } from './log-capture.js';

type Fault = '503' | '429' | 'reset-before' | 'reset-after';
/** The first attempts of every post fail, in this order; later ones pass. */
const FAULTS: Fault[] = ['503', 'reset-before', '429', 'reset-after'];

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Fault injection in front of the worker API routes (a route hook, as a flaky proxy would behave). */
function injectFaults(app: FastifyInstance, faults: readonly Fault[] = FAULTS): { injected: Record<Fault, number> } {
  const attempts = new Map<string, number>();
  const injected: Record<Fault, number> = { '503': 0, '429': 0, 'reset-before': 0, 'reset-after': 0 };
  const resetAfter = new WeakSet<FastifyRequest>();
  app.addHook('preHandler', async (request, reply) => {
    const path = request.url.split('?')[0] ?? '';
    if (!path.includes('/job-done/') && !path.includes('/job-stream/')) return;
    const body =
      typeof request.body === 'string' && request.body !== '' ? (JSON.parse(request.body) as { status?: string; metrics?: { stream_index?: number } }) : {};
    if (body.status === 'IN_PROGRESS') return;
    // One key per post: a job's result, or one chunk of its stream.
    const key = `${path}#${body.metrics?.stream_index ?? ''}`;
    const attempt = (attempts.get(key) ?? 0) + 1;
    attempts.set(key, attempt);
    const fault = faults[attempt - 1];
    if (fault === undefined) return;
    injected[fault]++;
    switch (fault) {
      case '503':
        return reply.code(503).send({ error: 'overloaded' });
      case '429':
        return reply.code(429).header('retry-after', '0').send({ error: 'slow down' });
      case 'reset-before':
        reply.hijack();
        request.raw.socket.destroy();
        return;
      case 'reset-after':
        resetAfter.add(request);
        return;
    }
  });
  // Applied, but the answer never reaches the worker.
  app.addHook('onSend', async (request, _reply, payload) => {
    if (resetAfter.has(request)) request.raw.socket.destroy();
    return payload;
  });
  return { injected };
}

async function startWorker(server: RunningWorkerApi, handler: Handler<unknown>, concurrency: number) {
  const logs = captureLogs('info');
  const metrics = countingMetrics();
  const transport = createPlatformTransport({
    processEnv: { ...server.envFor('flaky', 200), RUNPOD_POD_ID: 'steady-worker' },
    logger: logs.logger,
    metrics,
    retryMinDelayMs: 5,
    retryMaxDelayMs: 50,
    requestTimeoutMs: 2_000,
  });
  const runtime = new WorkerRuntime(handler, resolveOptions({ concurrency }), transport, logs.logger);
  void runtime.start();
  cleanups.push(async () => {
    await runtime.stop();
  });
  return { transport, runtime, logs, metrics };
}

describe('result delivery through a flaky harness', () => {
  it('completes every job exactly once while job-done answers 503 and 429 and connections reset', async () => {
    let faults: { injected: Record<Fault, number> } | undefined;
    const server = await startWorkerApiServer({ beforeRoutes: (app) => (faults = injectFaults(app)) });
    cleanups.push(() => server.close());
    const { metrics, logs } = await startWorker(server, async (job) => ({ echo: job.input }), 2);
    const endpoint = server.harness.endpoint('flaky');
    const ids = await Promise.all(Array.from({ length: 6 }, async (_, n) => (await endpoint.submit(parseJobRequest({ input: { n } }))).id));
    await waitFor(async () => (await endpoint.health()).jobs.completed === 6, 'six jobs completed', 20_000);
    // The post applied just before its connection reset comes once more; wait for those answers too.
    await waitFor(() => server.seen.results.length === 12, 'every job-done answered', 20_000);
    for (const [n, id] of ids.entries()) expect(await endpoint.status(id)).toMatchObject({ status: 'COMPLETED', output: { echo: { n } } });
    // Each job was applied once; the post whose answer was lost came again and was recognised as the same result (repeated), not applied twice.
    for (const id of ids) {
      const posts = server.seen.results.filter((result) => result.jobId === id);
      expect(posts.filter((result) => result.ack.applied && result.ack.repeated !== true)).toHaveLength(1);
      expect(posts.filter((result) => result.ack.applied && result.ack.repeated === true).map((result) => result.ack)).toEqual([
        { applied: true, repeated: true, status: 'COMPLETED' },
      ]);
    }
    expect(faults?.injected).toEqual({ '503': 6, '429': 6, 'reset-before': 6, 'reset-after': 6 });
    await waitFor(() => logs.find('delivered after retries').length === 6, 'six "delivered after retries" lines', 5_000);
    expect(metrics.resultPostRetriesTotal.value).toBe(24);
    expect(metrics.resultPostGiveUpsTotal.value).toBe(0);
    expect((await endpoint.health()).jobs.failed).toBe(0);
  });

  it('stores every chunk of a stream once and in order while job-stream fails the same way', async () => {
    const server = await startWorkerApiServer({ beforeRoutes: (app) => injectFaults(app) });
    cleanups.push(() => server.close());
    await startWorker(
      server,
      async function* () {
        for (let i = 0; i < 5; i++) yield `tok${i} `;
      },
      1,
    );
    const endpoint = server.harness.endpoint('flaky');
    const { id } = await endpoint.submit(parseJobRequest({ input: {} }));
    const view = await endpoint.waitForEnd(id, 20_000);
    expect(view.status).toBe('COMPLETED');
    const { stream } = await endpoint.readStream(id);
    // Default coalescing may join tokens that wait behind a retried post: whole tokens, in order, none twice.
    expect(stream.map((chunk) => chunk.output).join('')).toBe('tok0 tok1 tok2 tok3 tok4 ');
    for (const chunk of stream) expect(chunk.output).toMatch(/^(tok\d )+$/);
    expect(stream.map((chunk) => chunk.metrics?.stream_index)).toEqual([...stream.keys()]);
  });
});

describe('result delivery deadline', () => {
  it('rejects with SW_RESULT_UNDELIVERED once the deadline passes, logged as an error and counted', async () => {
    const server = await startWorkerApiServer({
      beforeRoutes: (app) =>
        app.addHook('preHandler', async (request, reply) => {
          if (request.url.includes('/job-done/')) return reply.code(503).send({ error: 'down' });
        }),
    });
    cleanups.push(() => server.close());
    const logs = captureLogs('info');
    const metrics = countingMetrics();
    const transport: PlatformTransport = createPlatformTransport({
      processEnv: { ...server.envFor('down'), RUNPOD_POD_ID: 'w' },
      logger: logs.logger,
      metrics,
      heartbeat: false,
      resultDeadlineMs: 400,
      retryMinDelayMs: 10,
      retryMaxDelayMs: 50,
    });
    cleanups.push(() => transport.close());
    const failure = await transport.postResult('j1', { kind: 'output', output: 1 }, { isStream: false, stopPod: false }).catch((e: unknown) => e);
    expect(isServerlessWorkerError(failure) && failure.code).toBe('SW_RESULT_UNDELIVERED');
    expect((failure as Error).message).toContain('the deadline of 400 ms passed');
    const details = (failure as { details: { attempts: number; lastStatus: number } }).details;
    expect(details.attempts).toBeGreaterThan(1);
    expect(details.lastStatus).toBe(503);
    expect(metrics.resultPostGiveUpsTotal.value).toBe(1);
    expect(metrics.resultPostRetriesTotal.value).toBeGreaterThan(0);
    expect(logs.find('could not be delivered', 50)).toHaveLength(1);
  });

  it('on close, gives posts still retrying the drain time, then abandons them (logged and counted)', async () => {
    const server = await startWorkerApiServer({
      beforeRoutes: (app) =>
        app.addHook('preHandler', async (request, reply) => {
          if (request.url.includes('/job-done/')) return reply.code(503).send({ error: 'down' });
        }),
    });
    cleanups.push(() => server.close());
    const logs = captureLogs('info');
    const metrics = countingMetrics();
    const transport = createPlatformTransport({
      processEnv: { ...server.envFor('down'), RUNPOD_POD_ID: 'w' },
      logger: logs.logger,
      metrics,
      heartbeat: false,
      closeDrainMs: 200,
      retryMinDelayMs: 10,
      retryMaxDelayMs: 50,
    });
    const posting = transport.postResult('j1', { kind: 'output', output: 1 }, { isStream: false, stopPod: false }).catch((e: unknown) => e);
    await waitFor(() => metrics.resultPostRetriesTotal.value > 0, 'a retry', 5_000);
    await transport.close();
    const failure = await posting;
    expect(isServerlessWorkerError(failure) && failure.code).toBe('SW_RESULT_UNDELIVERED');
    expect((failure as Error).message).toContain('shutting down');
    expect(metrics.resultPostGiveUpsTotal.value).toBe(1);
  });
});
