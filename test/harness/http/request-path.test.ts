/**
 * The request path every route shares (issue 46 item 1), over real HTTP: JSON bodies
 * found by fastify's parser cache (the lenient parser is `application/json`'s own, not
 * only the catch-all), parsed by JSON.parse alone unless a key could be `__proto__` or
 * `constructor` (then fastify's poisoning check refuses it, escaped or not, as before),
 * and the 404/405 check's onRequest hook run for unmatched requests only.
 */
import { request as httpRequest } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { mayPoisonPrototype } from '../../../packages/platform/src/harness/http/json-body.js';
import { startTestServer, type TestServer } from '../../kit/index.js';

let running: TestServer | undefined;

afterEach(async () => {
  await running?.close();
  running = undefined;
});

/** POST `body` as it is with `content-type`: status and parsed answer. */
function post(url: string, body: string, contentType = 'application/json'): Promise<{ status: number; json: { error?: { code?: string } } }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: 'POST', headers: { 'content-type': contentType, 'content-length': String(Buffer.byteLength(body)) } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) as { error?: { code?: string } } }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('the shared request path', () => {
  it('says which texts need the poisoning check: the plain and every escaped spelling of both keys', () => {
    for (const text of ['{"__proto__":{}}', '{"constructor":{"prototype":{}}}', '{"\\u005f_proto__":1}', '{"\\u0063onstructor":1}', '{"a":"\\u00e9"}'])
      expect({ text, check: mayPoisonPrototype(text) }).toEqual({ text, check: true });
    for (const text of ['{"input":{}}', '{"input":{"proto":"_ _","construct":1}}', '[1,2,"x"]'])
      expect({ text, check: mayPoisonPrototype(text) }).toEqual({ text, check: false });
  });

  it('parses application/json with its own parser, found without parsing the header each time', async () => {
    running = await startTestServer();
    expect(running.server.app.hasContentTypeParser('application/json')).toBe(true);
  });

  it('refuses poisoned bodies, plain or escaped, 400 SW_INVALID_REQUEST with nothing queued, under any content type', async () => {
    running = await startTestServer();
    running.harness.endpoint('ep');
    const bodies = [
      '{"input":{},"__proto__":{"x":1}}',
      '{"input":{"\\u005f\\u005fproto__":{"x":1}}}',
      '{"input":{"constructor":{"prototype":{"x":1}}}}',
      '{"input":{"\\u0063onstructor":{"prototype":{"x":1}}}}',
      '{"input":',
    ];
    for (const body of bodies) {
      for (const type of ['application/json', 'application/json; charset=utf-8', 'text/plain']) {
        const answer = await post(`${running.endpointUrl()}/run`, body, type);
        expect({ body, type, status: answer.status, code: answer.json.error?.code }).toEqual({ body, type, status: 400, code: 'SW_INVALID_REQUEST' });
      }
    }
    expect((await running.harness.endpoint('ep').jobs()).length).toBe(0);
  });

  it('takes a body led by a byte-order mark and one with escapes that hold no guarded key, as before', async () => {
    running = await startTestServer();
    for (const body of ['\uFEFF{"input":{"a":1}}', '{"input":{"word":"caf\\u00e9"}}']) {
      const answer = await post(`${running.endpointUrl()}/run`, body);
      expect({ body, status: answer.status }).toEqual({ body, status: 200 });
    }
    const jobs = await running.harness.endpoint('ep').jobs();
    expect(jobs.map((job) => job.request.input).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)))).toEqual([{ a: 1 }, { word: 'café' }]);
  });

  it('runs no server-wide onRequest hook on a route without a key: the 404 check is the not-found handler own', async () => {
    running = await startTestServer();
    const routes = running.server.app.printRoutes({ includeHooks: true, commonPrefix: false });
    const health = routes.split('\n').findIndex((line) => line.includes('health (GET'));
    expect(health).toBeGreaterThanOrEqual(0);
    // The lines under a route list its hooks (`• (onRequest) [...]`) until the next route.
    const hooks = routes
      .split('\n')
      .slice(health + 1)
      .filter((line, i, all) => all.slice(0, i + 1).every((prior) => prior.includes('•')));
    expect(hooks.filter((line) => line.includes('onRequest'))).toEqual([]);
    const unknown = await post(`${running.url}/nowhere`, '{}');
    expect([unknown.status, unknown.json.error?.code]).toEqual([404, 'SW_ROUTE_NOT_FOUND']);
  });
});
