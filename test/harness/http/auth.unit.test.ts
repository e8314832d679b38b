/**
 * The API key over real HTTP: 401 on every route without it or with a wrong one;
 * Bearer and the bare key accepted; and the loopback-only rule without a key.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Harness, ManualClock } from '../../../src/harness/index.js';
import { createHarnessServer, isLoopbackHost } from '../../../packages/platform/src/harness/server-api.js';
import { isServerlessWorkerError } from '../../../src/job/index.js';
import { call, errorCode, startTestServer, type TestServer } from '../../kit/index.js';

let running: TestServer | undefined;

afterEach(async () => {
  await running?.close();
  running = undefined;
});

const KEY = 'test-key-0123456789';

/** Every route the server has, and a few it has not. */
const ROUTES: Array<[string, string]> = [
  ['POST', '/v2/ep/run'],
  ['POST', '/v2/ep/runsync'],
  ['GET', '/v2/ep/status/job-1'],
  ['GET', '/v2/ep/status-sync/job-1'],
  ['GET', '/v2/ep/stream/job-1'],
  ['POST', '/v2/ep/cancel/job-1'],
  ['POST', '/v2/ep/retry/job-1'],
  ['POST', '/v2/ep/purge-queue'],
  ['GET', '/v2/ep/health'],
  ['GET', '/v2/ep/requests'],
  ['POST', '/v2/ep/openai/v1/chat/completions'],
  ['GET', '/v2/ep/openai/v1/models'],
  ['GET', '/v2/ep/job-take/worker-1'],
  ['GET', '/metrics'],
  ['GET', '/v1/templates'],
  ['POST', '/v1/endpoints'],
  ['GET', '/v2/ep/no-such-route'],
  ['GET', '/v2/ep/run'],
];

describe('with an API key', () => {
  it('401 SW_UNAUTHORIZED on every route without the key, or with a wrong one', async () => {
    running = await startTestServer({ apiKey: KEY }, { clock: new ManualClock() });
    for (const [method, path] of ROUTES) {
      const variants: Array<Record<string, string>> = [
        {},
        { authorization: 'Bearer wrong-key' },
        { authorization: `Bearer ${KEY}x` },
        { authorization: KEY.slice(1) },
      ];
      for (const headers of variants) {
        const answer = await call(method, `${running.url}${path}`, { headers, ...(method === 'POST' ? { body: { input: {} } } : {}) });
        expect(answer.status, `${method} ${path} ${JSON.stringify(headers)}`).toBe(401);
        expect(errorCode(answer)).toBe('SW_UNAUTHORIZED');
      }
    }
    expect(await running.harness.endpoint('ep').jobs()).toEqual([]);
  });

  it('OpenAI routes answer 401 in OpenAI error shape', async () => {
    running = await startTestServer({ apiKey: KEY });
    const answer = await call('POST', `${running.endpointUrl()}/openai/v1/chat/completions`, { body: {} });
    expect(answer.json).toEqual({
      error: { code: 'SW_UNAUTHORIZED', type: 'authentication_error', param: null, message: expect.stringContaining('API key') },
    });
  });

  it('accepts "Bearer <key>" and the bare key', async () => {
    running = await startTestServer({ apiKey: KEY }, { clock: new ManualClock() });
    for (const authorization of [`Bearer ${KEY}`, `bearer ${KEY}`, KEY]) {
      const health = await call('GET', `${running.endpointUrl()}/health`, { headers: { authorization } });
      expect(health.status, authorization).toBe(200);
      const run = await call('POST', `${running.endpointUrl()}/run`, { headers: { authorization }, body: { input: {} } });
      expect(run.status).toBe(200);
    }
  });
});

describe('without an API key', () => {
  it('answers every request (loopback only)', async () => {
    running = await startTestServer({}, { clock: new ManualClock() });
    expect(running.server.authenticated).toBe(false);
    expect((await call('GET', `${running.endpointUrl()}/health`)).status).toBe(200);
  });

  it('refuses a non-loopback address with SW_INSECURE_BIND, before listening', async () => {
    const harness = new Harness();
    for (const host of ['0.0.0.0', '::', '192.0.2.10']) {
      const error = await createHarnessServer({ harness, host, port: 0 }).catch((e: unknown) => e);
      expect(isServerlessWorkerError(error) && error.code, host).toBe('SW_INSECURE_BIND');
    }
    await harness.close();
  });

  it('knows loopback addresses', () => {
    for (const host of ['127.0.0.1', '127.1.2.3', 'localhost', '::1', '[::1]', '0:0:0:0:0:0:0:1', '::ffff:127.0.0.1']) {
      expect(isLoopbackHost(host), host).toBe(true);
    }
    for (const host of ['0.0.0.0', '::', '10.0.0.1', 'example.com', '::2', '128.0.0.1']) {
      expect(isLoopbackHost(host), host).toBe(false);
    }
  });
});
