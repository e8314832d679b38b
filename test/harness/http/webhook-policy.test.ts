/**
 * Webhook targets pass the target policy (net/target-policy.ts): never the harness
 * itself (the reproduction: a webhook at the harness's own /purge-queue emptied
 * another endpoint's queue), never link-local or metadata addresses unless allowed, a
 * name checked on the address it resolves to and connects to; a refused delivery is
 * logged, counted and shown on the job page as failed with the reason, never retried,
 * and the `allow` list widens the policy. Real HTTP on 127.0.0.1.
 */
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { TargetPolicy, parseAllowList } from '../../../src/net/target-policy.js';
import { WebhookSender, type WebhookOutcome } from '../../../packages/platform/src/harness/server-api.js';
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

async function counter(server: TestServer, name: string): Promise<string> {
  return (await server.server.metrics.text())
    .split('\n')
    .filter((line) => line.startsWith(name))
    .join('\n');
}

interface JobPage {
  webhookDeliveries?: Array<{ delivered: boolean; attempts: number; last: number | string }>;
}

describe('webhook target policy on the harness server', () => {
  it("never reaches the harness itself: a webhook at its own /purge-queue leaves the other endpoint's queue alone, and the refusal is logged and shows on the job page", async () => {
    const logged: Array<{ level: number; msg: string; reason?: string }> = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString('utf8').split('\n')) if (line.trim() !== '') logged.push(JSON.parse(line) as { level: number; msg: string });
        done();
      },
    });
    running = await startTestServer({ webhook: { retryDelayMs: 10 }, logger: pino({ level: 'info' }, sink) });
    const server = running;
    // Another endpoint's queue, with no worker on it.
    for (let i = 0; i < 3; i++) expect((await call('POST', `${server.endpointUrl('victim')}/run`, { body: { input: { i } } })).status).toBe(200);
    stopWorker = startTestWorker(server.harness, async () => 'done').stop;
    const port = new URL(server.url).port;
    const targets = [
      `http://127.0.0.1:${port}/v2/victim/purge-queue`,
      `http://localhost:${port}/v2/victim/purge-queue`,
      `http://[::ffff:127.0.0.1]:${port}/v2/victim/purge-queue`,
    ];
    const ids: string[] = [];
    for (const webhook of targets) {
      const answer = await call('POST', `${server.endpointUrl()}/runsync`, { body: { input: {}, webhook } });
      expect(answer.json).toMatchObject({ status: 'COMPLETED' });
      ids.push((answer.json as { id: string }).id);
    }
    await waitFor(
      async () => (await counter(server, 'serverless_worker_webhook_give_ups_total')) === 'serverless_worker_webhook_give_ups_total 3',
      'three refused deliveries',
    );
    expect(((await call('GET', `${server.endpointUrl('victim')}/health`)).json as { jobs: { inQueue: number } }).jobs.inQueue).toBe(3);
    const refusals = logged.filter((line) => line.level === 40 && line.msg.startsWith('webhook refused by the target policy'));
    expect(refusals).toHaveLength(3);
    expect(refusals.every((line) => line.reason?.endsWith('is the harness itself'))).toBe(true);
    for (const id of ids) {
      const page = (await call('GET', `${server.url}/ui/api/endpoints/ep/jobs/${id}`)).json as JobPage;
      expect(page.webhookDeliveries).toEqual([
        expect.objectContaining({ delivered: false, attempts: 1, last: expect.stringMatching(/^refused: .*is the harness itself$/) }),
      ]);
    }
  });

  it('refuses link-local and metadata targets without connecting, and delivers to another loopback receiver', async () => {
    const hook = await startReceiver(() => 200);
    receivers.push(hook);
    running = await startTestServer({ webhook: { retryDelayMs: 10 } });
    const server = running;
    stopWorker = startTestWorker(server.harness, async () => 'done').stop;
    const refused = [
      'http://169.254.169.254/latest/meta-data/',
      'http://metadata.google.internal/computeMetadata/v1/',
      'http://[fd00:ec2::254]/latest',
      'http://[fe80::1]:8080/x',
      'http://0.0.0.0:9/x',
    ];
    const ids: string[] = [];
    for (const webhook of [...refused, hook.url]) {
      ids.push(((await call('POST', `${server.endpointUrl()}/runsync`, { body: { input: {}, webhook } })).json as { id: string }).id);
    }
    await waitFor(() => hook.received.length === 1, 'the loopback receiver');
    await waitFor(
      async () => (await counter(server, 'serverless_worker_webhook_give_ups_total')) === `serverless_worker_webhook_give_ups_total ${refused.length}`,
      'the refusals',
    );
    const reasons = await Promise.all(
      ids
        .slice(0, refused.length)
        .map(async (id) => ((await call('GET', `${server.url}/ui/api/endpoints/ep/jobs/${id}`)).json as JobPage).webhookDeliveries?.[0]?.last),
    );
    expect(reasons).toEqual([
      'refused: 169.254.169.254 is a cloud metadata address',
      'refused: metadata.google.internal is a cloud metadata service',
      'refused: fd00:ec2::254 is a cloud metadata address',
      'refused: fe80::1 is a link-local address',
      'refused: 0.0.0.0 is an unspecified address',
    ]);
  });

  it('refuses an invalid allow entry with SW_INVALID_OPTIONS naming it', async () => {
    await expect(startTestServer({ webhook: { allow: ['10.0.0.0/33'] } })).rejects.toMatchObject({
      code: 'SW_INVALID_OPTIONS',
      message: expect.stringContaining('10.0.0.0/33'),
    });
  });
});

describe('WebhookSender with a TargetPolicy', () => {
  async function deliverOnce(policy: TargetPolicy, url: string): Promise<WebhookOutcome> {
    const outcomes: WebhookOutcome[] = [];
    const sender = new WebhookSender({ policy, settings: { retryDelayMs: 10, attempts: 3, timeoutMs: 5_000 }, onOutcome: (outcome) => outcomes.push(outcome) });
    sender.deliver(url, { ok: true }, { jobId: 'job-1', endpointId: 'ep' });
    await sender.whenIdle();
    sender.close();
    expect(outcomes).toHaveLength(1);
    return outcomes[0] as WebhookOutcome;
  }

  it('checks the address a name connects to: "localhost" is loopback, refused when loopback is not allowed and sent once it is', async () => {
    const hook = await startReceiver(() => 200);
    receivers.push(hook);
    const byName = hook.url.replace('127.0.0.1', 'localhost');
    const closed = await deliverOnce(new TargetPolicy({ selfPort: () => undefined, loopback: false }), byName);
    expect(closed).toMatchObject({ delivered: false, attempts: 1, refused: expect.stringMatching(/is a loopback address$/) });
    expect(hook.received).toHaveLength(0);
    const widened = await deliverOnce(new TargetPolicy({ selfPort: () => undefined, loopback: false, allow: ['loopback'] }), byName);
    expect(widened).toMatchObject({ delivered: true, attempts: 1 });
    const byRange = await deliverOnce(new TargetPolicy({ selfPort: () => undefined, loopback: false, allow: ['127.0.0.0/8', '::1'] }), byName);
    expect(byRange).toMatchObject({ delivered: true });
    expect(hook.received).toHaveLength(2);
  });

  it("never reaches the harness's own port, whatever the allow list", async () => {
    const hook = await startReceiver(() => 200);
    receivers.push(hook);
    const port = Number(new URL(hook.url).port);
    const outcome = await deliverOnce(
      new TargetPolicy({ selfPort: () => port, allow: ['loopback', '127.0.0.0/8'] }),
      hook.url.replace('127.0.0.1', 'localhost'),
    );
    expect(outcome).toMatchObject({ delivered: false, refused: `127.0.0.1:${port} is the harness itself` });
    expect(hook.received).toHaveLength(0);
  });

  it('reads IPv4-mapped IPv6 spellings as the IPv4 address they carry, before any connection', () => {
    const policy = new TargetPolicy({ selfPort: () => 8000 });
    const hostOf = (url: string): string => new URL(url).hostname;
    expect(policy.refuseName(hostOf('http://[::ffff:127.0.0.1]:8000/v2/x/purge-queue'), 8000)).toBe('127.0.0.1:8000 is the harness itself');
    expect(policy.refuseName(hostOf('http://[::ffff:169.254.169.254]/latest'), 80)).toBe('169.254.169.254 is a cloud metadata address');
    expect(policy.refuseName('0:0:0:0:0:ffff:a9fe:1', 80)).toBe('169.254.0.1 is a link-local address');
    expect(policy.refuseName(hostOf('http://[::ffff:10.1.2.3]:9000/'), 9000)).toBeUndefined();
  });

  it('parses allow entries and names a bad one', () => {
    expect(parseAllowList(['10.0.0.0/8', '::1', 'link-local', 'METADATA'])).toHaveLength(4);
    expect(() => parseAllowList(['example.com'])).toThrow(/"example.com" is not a CIDR range/);
  });
});
