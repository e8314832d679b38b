/**
 * Webhooks against local receivers: the final record as /status shows it; retries on
 * anything but 200 (exactly 3 attempts in all, the delay scaled down); give-ups
 * counted; webhookV2 too; and a dead receiver never holds up the queue.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createMetrics } from '../../../src/metrics/index.js';
import { WebhookSender } from '../../../packages/platform/src/harness/server-api.js';
import { startTestWorker } from './helpers.js';
import { call, startReceiver, startTestServer, type TestServer, waitFor, type WebhookReceiver } from '../../kit/index.js';

let running: TestServer | undefined;
let stopWorker: (() => Promise<void>) | undefined;
const receivers: WebhookReceiver[] = [];

afterEach(async () => {
  await stopWorker?.();
  await running?.close();
  for (const receiver of receivers.splice(0)) await receiver.close();
  running = undefined;
  stopWorker = undefined;
});

async function receiver(answer: (attempt: number) => number | 'hang'): Promise<WebhookReceiver> {
  const started = await startReceiver(answer);
  receivers.push(started);
  return started;
}

async function counter(server: TestServer, name: string): Promise<string> {
  const text = await server.server.metrics.text();
  return text
    .split('\n')
    .filter((line) => line.startsWith(name))
    .join('\n');
}

describe('webhooks', () => {
  it('POSTs the final job record, as /status shows it, once a 200 answers', async () => {
    const hook = await receiver(() => 200);
    running = await startTestServer({ webhook: { retryDelayMs: 10 } });
    stopWorker = startTestWorker(running.harness, async (job: { input: unknown }) => ({ echo: job.input })).stop;
    const { id } = (await call('POST', `${running.endpointUrl()}/runsync`, { body: { input: { a: 1 }, webhook: hook.url } })).json as { id: string };
    await waitFor(() => hook.received.length === 1, 'the webhook');
    await running.server.webhooks.whenIdle();
    const status = (await call('GET', `${running.endpointUrl()}/status/${id}`)).json;
    expect(hook.received[0]!.body).toEqual(status);
    expect(hook.received[0]!.body).toMatchObject({ id, status: 'COMPLETED', output: { echo: { a: 1 } } });
    expect(hook.received[0]!.headers['content-type']).toBe('application/json');
    expect(hook.received).toHaveLength(1);
    expect(await counter(running, 'serverless_worker_webhook_deliveries_total')).toContain('outcome="success"} 1');
  });

  it('retries a receiver that fails twice, then succeeds: 3 attempts, delivered', async () => {
    const hook = await receiver((attempt) => (attempt <= 2 ? 500 : 200));
    running = await startTestServer({ webhook: { retryDelayMs: 20 } });
    stopWorker = startTestWorker(running.harness, async () => 'ok').stop;
    await call('POST', `${running.endpointUrl()}/runsync`, { body: { input: {}, webhook: hook.url } });
    await waitFor(() => hook.received.length === 3, 'three attempts');
    await running.server.webhooks.whenIdle();
    expect(hook.received).toHaveLength(3);
    const deliveries = await counter(running, 'serverless_worker_webhook_deliveries_total');
    expect(deliveries).toContain('outcome="failure"} 2');
    expect(deliveries).toContain('outcome="success"} 1');
    expect(await counter(running, 'serverless_worker_webhook_give_ups_total')).toBe('serverless_worker_webhook_give_ups_total 0');
  });

  it('gives up after exactly 3 attempts on a receiver that always fails (any non-200 is a failure), and counts it', async () => {
    const hook = await receiver(() => 204);
    running = await startTestServer({ webhook: { retryDelayMs: 20 } });
    stopWorker = startTestWorker(running.harness, async () => {
      throw new Error('boom');
    }).stop;
    await call('POST', `${running.endpointUrl()}/runsync`, { body: { input: {}, webhook: hook.url } });
    await waitFor(() => hook.received.length >= 3 && running!.server.webhooks.pending === 0, 'the give-up');
    expect(hook.received).toHaveLength(3);
    expect(hook.received.every((hit) => (hit.body as { status: string }).status === 'FAILED')).toBe(true);
    expect(await counter(running, 'serverless_worker_webhook_give_ups_total')).toBe('serverless_worker_webhook_give_ups_total 1');
  });

  it('delivers to webhookV2 as well', async () => {
    const one = await receiver(() => 200);
    const two = await receiver(() => 200);
    running = await startTestServer({ webhook: { retryDelayMs: 10 } });
    stopWorker = startTestWorker(running.harness, async () => 'ok').stop;
    await call('POST', `${running.endpointUrl()}/runsync`, { body: { input: {}, webhook: one.url, webhookV2: two.url } });
    await waitFor(() => one.received.length === 1 && two.received.length === 1, 'both webhooks');
    expect(two.received[0]!.body).toEqual(one.received[0]!.body);
  });

  it('never holds up the queue: jobs run and answer while a receiver hangs', async () => {
    const hook = await receiver(() => 'hang');
    running = await startTestServer({ webhook: { retryDelayMs: 10, timeoutMs: 60_000 } });
    stopWorker = startTestWorker(running.harness, async (job: { input: { n: number } }) => job.input.n * 2).stop;
    const first = await call('POST', `${running.endpointUrl()}/runsync`, { body: { input: { n: 1 }, webhook: hook.url } });
    expect(first.json).toMatchObject({ status: 'COMPLETED', output: 2 });
    await waitFor(() => hook.received.length === 1, 'the hanging delivery');
    const second = await call('POST', `${running.endpointUrl()}/runsync`, { body: { input: { n: 2 }, webhook: hook.url } });
    expect(second.json).toMatchObject({ status: 'COMPLETED', output: 4 });
    expect(running.server.webhooks.pending).toBe(2);
  });
});

describe('WebhookSender', () => {
  it('a refused connection counts as a failed attempt; 3 in all; the outcome says so', async () => {
    const dead = await startReceiver(() => 200);
    const url = dead.url;
    await dead.close();
    const outcomes: unknown[] = [];
    const metrics = createMetrics({ defaultMetrics: false });
    const sender = new WebhookSender({ settings: { retryDelayMs: 5 }, metrics, onOutcome: (outcome) => outcomes.push(outcome) });
    sender.deliver(url, { id: 'j' }, { jobId: 'j', endpointId: 'ep' });
    await sender.whenIdle();
    expect(outcomes).toEqual([{ url, jobId: 'j', delivered: false, attempts: 3, last: expect.any(String) }]);
    expect(await metrics.text()).toContain('serverless_worker_webhook_give_ups_total 1');
  });

  it('close() abandons deliveries waiting for their next attempt', async () => {
    const hook = await receiver(() => 500);
    const outcomes: Array<{ attempts: number }> = [];
    const sender = new WebhookSender({ settings: { retryDelayMs: 3_600_000 }, onOutcome: (outcome) => outcomes.push(outcome) });
    sender.deliver(hook.url, {}, { jobId: 'j', endpointId: 'ep' });
    await waitFor(() => hook.received.length === 1, 'the first attempt');
    sender.close();
    await sender.whenIdle();
    await waitFor(() => outcomes.length === 1, 'the outcome');
    expect(outcomes[0]).toMatchObject({ delivered: false, attempts: 1 });
  });
});

describe('webhook URLs in logs', () => {
  it('hide the query, fragment and credentials where tokens ride', async () => {
    const { urlForLog } = await import('../../../packages/platform/src/harness/webhooks/webhook-sender.js');
    expect(urlForLog('https://user:pw@hooks.example.test/cb?token=s3cret#x')).toBe('https://hooks.example.test/cb (query, fragment and credentials hidden)');
    expect(urlForLog('http://127.0.0.1:9000/hook')).toBe('http://127.0.0.1:9000/hook');
    expect(urlForLog('not a url')).toBe('[unparseable URL]');
  });
});
