/**
 * POST /runsync over real HTTP, through the one request path every route takes (issue 46
 * item 1: no listener answers in front of fastify's): the common request answers as the
 * same request with `?wait=90000` (status, header names in their order, body shape); every
 * refused body the same 400 either way; a wrong key, the rate limit and a full queue
 * their usual answers; a query string, a trailing slash, another content type and an
 * endpoint not made yet served; `/runsync` at the root of --serve-api.
 */
import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { startTestWorker } from './helpers.js';
import { call, startTestServer, type TestServer } from '../../kit/index.js';

let running: TestServer | undefined;
let stopWorker: (() => Promise<void>) | undefined;

afterEach(async () => {
  await stopWorker?.();
  await running?.close();
  running = undefined;
  stopWorker = undefined;
});

interface RawAnswer {
  readonly status: number;
  /** Header names as sent, in order (date left out: it moves). */
  readonly names: string[];
  readonly headers: Record<string, string>;
  readonly body: string;
}

/** POST `body` as it is, with `headers`: the raw answer. */
function post(url: string, body: string, headers: Record<string, string> = { 'content-type': 'application/json' }): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => {
        const names: string[] = [];
        const all: Record<string, string> = {};
        for (let i = 0; i < res.rawHeaders.length; i += 2) {
          const name = (res.rawHeaders[i] ?? '').toLowerCase();
          all[name] = res.rawHeaders[i + 1] ?? '';
          if (name !== 'date') names.push(name);
        }
        resolve({ status: res.statusCode ?? 0, names, headers: all, body: text });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('POST /runsync', () => {
  it('answers a job as with a wait query: same status, header names and order, body shape', async () => {
    running = await startTestServer();
    stopWorker = startTestWorker(running.harness, async (job: { input: { word: string } }) => job.input.word.toUpperCase()).stop;
    const plain = await post(`${running.endpointUrl()}/runsync`, '{"input":{"word":"hi"}}');
    const routed = await post(`${running.endpointUrl()}/runsync?wait=90000`, '{"input":{"word":"hi"}}');
    expect(plain.status).toBe(200);
    expect(plain.names).toEqual(routed.names);
    expect(plain.headers['content-type']).toBe('application/json; charset=utf-8');
    const [a, b] = [JSON.parse(plain.body) as Record<string, unknown>, JSON.parse(routed.body) as Record<string, unknown>];
    expect(Object.keys(a)).toEqual(Object.keys(b));
    expect(a).toMatchObject({ status: 'COMPLETED', output: 'HI' });
    expect(String(a.id).startsWith('sync-')).toBe(true);
  });

  it('answers every refused body the same with or without a wait query: 400 with a code, nothing queued', async () => {
    running = await startTestServer();
    running.harness.endpoint('ep');
    const bodies = [
      '{"input":',
      '{"input":{},"__proto__":{"x":1}}',
      // Guarded keys escaped or as constructor.prototype: fastify's poisoning check refuses them.
      '{"input":{"\\u005f\\u005fproto__":{"x":1}}}',
      '{"input":{"constructor":{"prototype":{"x":1}}}}',
      '{"input":{"\\u0063onstructor":{"prototype":{"x":1}}}}',
      '{"input":5}',
      '   ',
      '[1,2]',
      '{"input":{},"webhook":"not a url"}',
      `{"input":${'['.repeat(40)}${']'.repeat(40)}}`,
    ];
    for (const body of bodies) {
      const plain = await post(`${running.endpointUrl()}/runsync`, body);
      const routed = await post(`${running.endpointUrl()}/runsync?wait=90000`, body);
      expect({ body, status: plain.status, names: plain.names, text: plain.body }).toEqual({
        body,
        status: routed.status,
        names: routed.names,
        text: routed.body,
      });
      expect(plain.status).toBe(400);
      expect(JSON.parse(plain.body)).toMatchObject({ error: { code: expect.stringMatching(/^SW_/), message: expect.any(String) } });
    }
    expect((await running.harness.endpoint('ep').jobs()).length).toBe(0);
  });

  it('refuses a wrong or missing key; serves a query, a trailing slash, another content type and an endpoint not made yet', async () => {
    running = await startTestServer({ apiKey: 'k' });
    stopWorker = startTestWorker(running.harness, async () => 'ok').stop;
    const url = `${running.endpointUrl()}/runsync`;
    const json = { 'content-type': 'application/json' };
    const missing = await post(url, '{"input":{}}', json);
    expect([missing.status, JSON.parse(missing.body)]).toEqual([401, { error: expect.objectContaining({ code: 'SW_UNAUTHORIZED' }) }]);
    const wrong = await post(url, '{"input":{}}', { ...json, authorization: 'Bearer nope' });
    expect(wrong.status).toBe(401);
    const auth = { ...json, authorization: 'Bearer k' };
    // An endpoint this process has not made yet: the route makes it (or refuses the id).
    const fresh = post(`${running.url}/v2/fresh/runsync`, '{"input":{}}', auth);
    await expect.poll(() => running!.harness.findEndpoint('fresh') !== undefined).toBe(true);
    await running.harness.endpoint('fresh').cancel((await running.harness.endpoint('fresh').jobs())[0]!.id);
    expect((await fresh).status).toBe(200);
    for (const [path, headers] of [
      [`${url}?wait=5000`, auth],
      [`${url}/`, auth],
      [url, { authorization: 'Bearer k', 'content-type': 'application/x-www-form-urlencoded' }],
    ] as const) {
      const answer = await post(path, '{"input":{}}', headers);
      expect({ path, status: answer.status }).toEqual({ path, status: 200 });
    }
    expect((await post(url, '{"input":{}}', auth)).status).toBe(200);
  });

  it('counts in the rate limiter with or without a query: past the limit a 429 with Retry-After', async () => {
    running = await startTestServer({ rateLimits: { windowMs: 3_600_000, requestsPerWorker: 1, limits: { runsync: { perWindow: 2 } } } });
    stopWorker = startTestWorker(running.harness, async () => 'ok').stop;
    const url = `${running.endpointUrl()}/runsync`;
    expect((await post(url, '{"input":{}}')).status).toBe(200);
    expect((await post(`${url}?wait=90000`, '{"input":{}}')).status).toBe(200);
    const refused = await post(url, '{"input":{}}');
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toMatch(/^\d+$/);
    expect(JSON.parse(refused.body)).toMatchObject({ error: { code: 'SW_RATE_LIMITED' } });
  });

  it('refuses a body the queue cap cannot take: 503 SW_QUEUE_FULL', async () => {
    running = await startTestServer({}, { maxQueuedBytes: 8 });
    const refused = await post(`${running.endpointUrl()}/runsync`, '{"input":{"a":"more than eight bytes"}}');
    expect(refused.status).toBe(503);
    expect(JSON.parse(refused.body)).toMatchObject({ error: { code: 'SW_QUEUE_FULL' } });
  });

  it('serves /runsync at the root of a server with a root endpoint (--serve-api)', async () => {
    running = await startTestServer({ rootEndpoint: 'ep' });
    stopWorker = startTestWorker(running.harness, async () => 'root').stop;
    const answer = await call('POST', `${running.url}/runsync`, { body: { input: {} } });
    expect(answer.json).toMatchObject({ status: 'COMPLETED', output: 'root' });
  });

  it("leaves fastify's own request listener in place, behind the body-read gate only (which answers nothing)", async () => {
    running = await startTestServer({ rootEndpoint: 'ep', apiKey: 'k' });
    const { app } = running.server;
    // Issue 46 item 1: a path of its own in front of fastify took fastify's listener off the server and answered /runsync itself.
    const listeners = app.server.listeners('request');
    expect(listeners.indexOf(app.routing)).toBe(1);
    // Before it the body-read gate; after it the fresh-connection tracker (net/fresh-connections.ts), which answers nothing either.
    expect(listeners).toHaveLength(3);
  });
});
