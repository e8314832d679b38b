/**
 * @module test/reliability/webhooks.test
 * Webhooks under failure, against the harness server on 127.0.0.1. The platform's
 * rule (spec 6): a receiver that does not answer 200 gets 3 attempts in all, 10 s
 * apart; the delay is scaled down here (250 ms). After the last attempt the give-up is
 * logged and counted in /metrics. A receiver that never answers must not hold up the
 * queue: deliveries run beside it.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { startLocalWorker, type LocalWorker } from '../../src/local/local-worker.js';
import { resolveOptions } from '../../src/worker/index.js';
import { captureLogs } from '../transports/platform/log-capture.js';
import { closedPort, startReceiver, waitFor } from '../kit/index.js';
import { printFigures, since } from './support/figures.js';
import { TestClient, mapLimit } from './support/http.js';
import { QueueCaller } from './support/queue.js';
import { startReliabilityServer, type ReliabilityServer } from './support/reliability-server.js';

const ENDPOINT = 'hooks';
/** The platform's 10 s between attempts, scaled down 40 times. */
const RETRY_DELAY_MS = 250;

/** A URL on 127.0.0.1 where nothing listens (a port just freed). */
async function deadUrl(): Promise<string> {
  return `http://127.0.0.1:${await closedPort()}/hook`;
}

const client = new TestClient();
const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
afterAll(() => client.close());

async function setUp(
  webhookTimeoutMs = 2_000,
): Promise<{ server: ReliabilityServer; queue: QueueCaller; logs: ReturnType<typeof captureLogs>; worker: LocalWorker }> {
  const logs = captureLogs('info');
  const server = await startReliabilityServer({ logger: logs.logger, webhook: { retryDelayMs: RETRY_DELAY_MS, timeoutMs: webhookTimeoutMs } });
  cleanups.push(() => server.close());
  const config = resolveOptions({ endpointId: ENDPOINT, concurrency: 8, gpuSampling: false, logger: logs.logger });
  const worker = startLocalWorker(async (job) => ({ echo: job.input }), config, logs.logger, server.harness);
  cleanups.push(() => worker.stop());
  return { server, queue: new QueueCaller(client, `${server.origin}/v2/${ENDPOINT}`), logs, worker };
}

async function metric(server: ReliabilityServer, name: string): Promise<number> {
  const text = await server.server.metrics.text();
  const line = text.split('\n').find((row) => row.startsWith(name));
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1));
}

describe('webhooks', () => {
  it('a receiver answering 503 gets exactly 3 attempts, the retry delay apart; the give-up is logged and counted', { timeout: 30_000 }, async () => {
    const { server, queue, logs } = await setUp();
    const receiver = await startReceiver(() => 503);
    cleanups.push(() => receiver.close());
    const id = await queue.run({ input: { n: 1 }, webhook: receiver.url });
    const view = await queue.ended(id);
    await waitFor(() => logs.find('webhook given up').length === 1, 'the give-up log line', 15_000);
    // Well past when a 4th attempt would come: there is none.
    await new Promise((resolve) => setTimeout(resolve, RETRY_DELAY_MS * 3));

    expect(view.status).toBe('COMPLETED');
    const arrivals = receiver.received.map((hook) => hook.at);
    expect(arrivals).toHaveLength(3);
    for (const { body } of receiver.received) expect(body).toMatchObject({ id, status: 'COMPLETED', output: { echo: { n: 1 } } });
    const gaps = arrivals.slice(1).map((at, i) => Math.round(at - (arrivals[i] as number)));
    // Never sooner than the delay (a timer never fires early; 5 ms for clock granularity).
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(RETRY_DELAY_MS - 5);
    const [gaveUp] = logs.find('webhook given up after its last attempt', 40);
    expect(gaveUp).toMatchObject({ requestId: id, attempts: 3, answer: 503, url: receiver.url });
    expect(logs.find('webhook attempt failed')).toHaveLength(3);
    expect(await metric(server, 'serverless_worker_webhook_give_ups_total')).toBe(1);
    expect(await metric(server, 'serverless_worker_webhook_deliveries_total{outcome="failure"}')).toBe(3);
    printFigures('webhook-503', { attempts: arrivals.length, retryDelayMs: RETRY_DELAY_MS, gapsMs: gaps.join('/'), giveUps: 1 });
  });

  it('a receiver that is down (connection refused) gets exactly 3 attempts; the give-up is logged and counted', { timeout: 30_000 }, async () => {
    const { server, queue, logs } = await setUp();
    const url = await deadUrl();
    const startedAt = performance.now();
    const id = await queue.run({ input: { n: 2 }, webhook: url });
    await queue.ended(id);
    await waitFor(() => logs.find('webhook given up').length === 1, 'the give-up log line', 15_000);
    const gaveUpAfterMs = since(startedAt);

    const attempts = logs.find('webhook attempt failed');
    expect(attempts.map((line) => line.attempt)).toEqual([1, 2, 3]);
    expect(logs.find('webhook given up after its last attempt', 40)[0]).toMatchObject({ requestId: id, attempts: 3 });
    expect(await metric(server, 'serverless_worker_webhook_give_ups_total')).toBe(1);
    expect(await metric(server, 'serverless_worker_webhook_deliveries_total{outcome="failure"}')).toBe(3);
    // Two waits between three attempts.
    expect(gaveUpAfterMs).toBeGreaterThanOrEqual(2 * RETRY_DELAY_MS);
    printFigures('webhook-refused', { attempts: attempts.length, gaveUpAfterMs, lastError: String(attempts.at(-1)?.answer ?? '') });
  });

  it('a receiver that never answers does not hold up the queue', { timeout: 60_000 }, async () => {
    const JOBS = 100;
    // Each attempt may hang 20 s: longer than the whole test takes to run every job.
    const { server, queue } = await setUp(20_000);
    const receiver = await startReceiver(() => 'hang');
    cleanups.push(() => receiver.close());
    const startedAt = performance.now();
    const ids = await mapLimit(
      Array.from({ length: JOBS }, (_, n) => n),
      20,
      (n) => queue.run({ input: { n }, webhook: receiver.url }),
    );
    const plain = await mapLimit(
      Array.from({ length: JOBS }, (_, n) => n),
      20,
      (n) => queue.run({ input: { n, plain: true } }),
    );
    const views = await mapLimit([...ids, ...plain], 20, (id) => queue.ended(id));
    const allDoneMs = since(startedAt);
    await waitFor(() => receiver.received.length === JOBS, 'a first attempt per job at the receiver', 20_000);

    expect(views.every((view) => view.status === 'COMPLETED')).toBe(true);
    // Every delivery is still waiting on the receiver while the jobs have all ended.
    expect(server.server.webhooks.pending).toBe(JOBS);
    expect(await metric(server, 'serverless_worker_webhook_give_ups_total')).toBe(0);
    printFigures('webhook-hanging', { jobsWithHook: JOBS, jobsWithout: JOBS, allEndedMs: allDoneMs, deliveriesStillPending: server.server.webhooks.pending });
  });
});
