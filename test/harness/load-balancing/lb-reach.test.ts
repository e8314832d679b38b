/**
 * What a caller can reach through the load-balancing endpoints: an absolute-form request
 * target on /lb answers 400 with a JSON error (it was a 500); a worker registration is
 * refused (403 SW_TARGET_REFUSED) at the harness itself, at link-local or metadata
 * addresses, and, on a harness without an API key, anywhere but loopback (a name is
 * checked on what it resolves to); with a key, registration needs it; `allow` widens.
 * Real HTTP on 127.0.0.1, a plain node:http server standing in for a worker's app.
 */
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { HarnessServer } from '../../../packages/platform/src/index.js';
import type { LoadBalancingSettingsInput } from '../../../packages/platform/src/harness/load-balancing/index.js';
import { TargetPolicy, targetRefusal } from '../../../src/net/target-policy.js';
import { startHarnessServer, waitFor } from '../../kit/index.js';

const ENDPOINT = 'reach';
let server: HarnessServer | undefined;
let app: Server | undefined;

afterEach(async () => {
  await server?.close();
  await server?.config.harness.close();
  server = undefined;
  if (app) {
    app.closeAllConnections();
    await new Promise<void>((resolve) => app?.close(() => resolve()));
  }
  app = undefined;
});

async function startHarness(options: { apiKey?: string; loadBalancing?: LoadBalancingSettingsInput } = {}): Promise<HarnessServer> {
  server = await startHarnessServer({
    rateLimits: {},
    ...(options.apiKey !== undefined ? { apiKey: options.apiKey } : {}),
    loadBalancing: { pingIntervalMs: 50, ...options.loadBalancing },
  });
  return server;
}

/** A stand-in for a worker's app: /ping 200, everything else echoes the target it got. */
async function startApp(): Promise<string> {
  app = createServer((request, response) => {
    if (request.url === '/ping') {
      response.writeHead(200).end('{}');
      return;
    }
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ target: request.url }));
  });
  await new Promise<void>((resolve) => app?.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(app.address() as AddressInfo).port}`;
}

async function register(
  running: HarnessServer,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; json: { error?: { code: string; message: string } } & Record<string, unknown> }> {
  const response = await fetch(`${running.url}/v2/${ENDPOINT}/load-balancing/workers`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  return { status: response.status, json: (await response.json()) as { error?: { code: string; message: string } } };
}

/** GET with `target` as the request target exactly as written (an absolute URL included: the form proxies get). */
function rawGet(running: HarnessServer, target: string): Promise<{ status: number; body: string }> {
  const base = new URL(running.url);
  return new Promise((resolve, reject) => {
    const request = httpRequest({ hostname: base.hostname, port: base.port, path: target, method: 'GET', agent: false, timeout: 10_000 }, (response) => {
      let body = '';
      response.setEncoding('utf8').on('data', (text: string) => (body += text));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    });
    request.on('timeout', () => request.destroy(new Error(`no answer to GET ${target} within 10 s`)));
    request.on('error', reject);
    request.end();
  });
}

describe('load-balancing request targets', () => {
  it('answers an absolute-form target on /lb with 400 SW_INVALID_REQUEST as JSON, and origin form still reaches the worker', async () => {
    const running = await startHarness();
    const appUrl = await startApp();
    expect((await register(running, { url: appUrl, workerId: 'w1' })).status).toBe(201);
    await waitFor(() => running.loadBalancing.pool(ENDPOINT)?.get('w1')?.state === 'healthy', 'the worker healthy', 10_000, 20);
    const port = new URL(running.url).port;
    for (const target of [`http://127.0.0.1:${port}/lb/${ENDPOINT}/x`, `http://169.254.169.254/lb/${ENDPOINT}/latest/meta-data`]) {
      const answer = await rawGet(running, target);
      expect(answer.status).toBe(400);
      expect(JSON.parse(answer.body)).toMatchObject({ error: { code: 'SW_INVALID_REQUEST', message: expect.stringContaining('origin form') } });
    }
    const plain = await rawGet(running, `/lb/${ENDPOINT}/x?y=1`);
    expect(plain.status).toBe(200);
    expect(JSON.parse(plain.body)).toEqual({ target: '/x?y=1' });
    expect(running.loadBalancing.pool(ENDPOINT)?.get('w1')?.state).toBe('healthy');
  });
});

describe('load-balancing worker registration', () => {
  it('without an API key: loopback workers only, never the harness itself, a name checked on what it resolves to', async () => {
    const running = await startHarness();
    const appUrl = await startApp();
    const port = new URL(running.url).port;
    const refusals: Array<[string, RegExp]> = [
      [running.url, /127\.0\.0\.1:\d+ is the harness itself/],
      [`http://localhost:${port}`, /localhost: 127\.0\.0\.1:\d+ is the harness itself|localhost: ::1:\d+ is the harness itself/],
      ['http://169.254.169.254', /169\.254\.169\.254 is a cloud metadata address/],
      ['http://metadata.google.internal', /metadata\.google\.internal is a cloud metadata service/],
      ['http://[fe80::1]:9000', /fe80::1 is a link-local address/],
      ['http://10.1.2.3:9000', /10\.1\.2\.3 is not a loopback address \(a harness without an API key/],
    ];
    for (const [url, reason] of refusals) {
      const answer = await register(running, { url });
      expect(answer.status, url).toBe(403);
      expect(answer.json.error).toMatchObject({ code: 'SW_TARGET_REFUSED', message: expect.stringMatching(reason) });
    }
    // The health URL is checked too.
    expect((await register(running, { url: appUrl, healthUrl: 'http://169.254.169.254' })).status).toBe(403);
    expect(running.loadBalancing.pool(ENDPOINT)?.all() ?? []).toEqual([]);
    expect((await register(running, { url: appUrl.replace('127.0.0.1', 'localhost'), workerId: 'by-name' })).status).toBe(201);
    // Pinged and proxied through the policy's lookup: the name resolves to loopback, allowed.
    await waitFor(() => running.loadBalancing.pool(ENDPOINT)?.get('by-name')?.state === 'healthy', 'the worker registered by name healthy', 10_000, 20);
    expect(await rawGet(running, `/lb/${ENDPOINT}/through-name`)).toEqual({ status: 200, body: JSON.stringify({ target: '/through-name' }) });
  });

  it('with an API key: registration needs it; any address but the harness, link-local and metadata; allow widens', async () => {
    const running = await startHarness({ apiKey: 'lb-key', loadBalancing: { allow: ['metadata'] } });
    const auth = { authorization: 'Bearer lb-key' };
    const appUrl = await startApp();
    expect((await register(running, { url: appUrl })).status).toBe(401);
    expect((await register(running, { url: appUrl }, { authorization: 'Bearer wrong' })).status).toBe(401);
    expect((await register(running, { url: appUrl, workerId: 'local' }, auth)).status).toBe(201);
    expect((await register(running, { url: 'http://10.1.2.3:9000', workerId: 'lan' }, auth)).status).toBe(201);
    expect((await register(running, { url: running.url }, auth)).json.error?.code).toBe('SW_TARGET_REFUSED');
    expect((await register(running, { url: 'http://[fe80::1]:9000' }, auth)).json.error?.code).toBe('SW_TARGET_REFUSED');
    // allow: ['metadata'] widens to the metadata addresses (not to the rest of link-local).
    expect((await register(running, { url: 'http://169.254.169.254', workerId: 'meta' }, auth)).status).toBe(201);
  });

  it('refuses a loadBalancing.allow entry that is not a range, an address or a word, naming it', async () => {
    await expect(startHarness({ loadBalancing: { allow: ['everything'] } })).rejects.toMatchObject({
      code: 'SW_INVALID_OPTIONS',
      message: expect.stringContaining('everything'),
    });
  });

  it("checks a name again on every connection: the policy's lookup refuses a name that resolves to a refused address", async () => {
    const appUrl = await startApp();
    const port = Number(new URL(appUrl).port);
    const get = (policy: TargetPolicy): Promise<number | Error> =>
      new Promise((resolve) => {
        const request = httpRequest({ hostname: 'localhost', port, path: '/x', agent: false, lookup: policy.lookupFor(port), timeout: 10_000 }, (response) => {
          response.resume();
          resolve(response.statusCode ?? 0);
        });
        request.on('error', resolve);
        request.end();
      });
    const refused = await get(new TargetPolicy({ selfPort: () => undefined, loopback: false }));
    expect(targetRefusal(refused)?.reason).toMatch(/^localhost: (127\.0\.0\.1|::1) is a loopback address$/);
    expect(await get(new TargetPolicy({ selfPort: () => undefined }))).toBe(200);
    // The harness itself, whatever the allow list.
    expect(targetRefusal(await get(new TargetPolicy({ selfPort: () => port, allow: ['loopback'] })))?.reason).toMatch(/is the harness itself$/);
  });
});
