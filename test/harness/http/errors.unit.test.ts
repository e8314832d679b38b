/**
 * Error answers over real HTTP: every error is JSON with a stable code; 400 names the
 * field and its range; 404 for unknown jobs, endpoints and routes; 405 with Allow;
 * 413 past the body limits (10 MB + 1 byte to /run) while a 15 MB /runsync passes.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/harness/index.js';
import { startTestWorker } from './helpers.js';
import { call, errorCode, startTestServer, type TestServer } from '../../kit/index.js';

let running: TestServer | undefined;
let stopWorker: (() => Promise<void>) | undefined;

afterEach(async () => {
  await stopWorker?.();
  await running?.close();
  running = undefined;
  stopWorker = undefined;
});

function message(answer: { json: unknown }): string {
  return (answer.json as { error: { message: string } }).error.message;
}

describe('400: malformed requests name the field and the allowed range', () => {
  it('malformed JSON', async () => {
    running = await startTestServer({}, { clock: new ManualClock() });
    const answer = await call('POST', `${running.endpointUrl()}/run`, { body: '{"input": ' });
    expect(answer.status).toBe(400);
    expect(errorCode(answer)).toBe('SW_INVALID_REQUEST');
    expect(answer.headers.get('content-type')).toContain('application/json');
  });

  it('a missing input, an empty body, input of the wrong type', async () => {
    running = await startTestServer({}, { clock: new ManualClock() });
    for (const body of [{ nope: 1 }, '', { input: 'text' }, [1]]) {
      const answer = await call('POST', `${running.endpointUrl()}/runsync`, { body });
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(errorCode(answer)).toBe('SW_INVALID_JOB_REQUEST');
    }
    expect(message(await call('POST', `${running.endpointUrl()}/run`, { body: {} }))).toContain('input is required');
  });

  it('a policy out of range', async () => {
    running = await startTestServer({}, { clock: new ManualClock() });
    const ttl = await call('POST', `${running.endpointUrl()}/run`, { body: { input: {}, policy: { ttl: 5 } } });
    expect(ttl.status).toBe(400);
    expect(message(ttl)).toContain('policy.ttl must be from 10000 to 604800000 ms');
    const timeout = await call('POST', `${running.endpointUrl()}/run`, { body: { input: {}, policy: { executionTimeout: 1 } } });
    expect(message(timeout)).toContain('policy.executionTimeout must be from 5000 to 604800000 ms');
    const webhook = await call('POST', `${running.endpointUrl()}/run`, { body: { input: {}, webhook: 'file:///etc/passwd' } });
    expect(webhook.status).toBe(400);
  });

  it('a /runsync wait out of range', async () => {
    running = await startTestServer({}, { clock: new ManualClock() });
    for (const wait of ['999', '300001', '-1', '1.5']) {
      const answer = await call('POST', `${running.endpointUrl()}/runsync?wait=${wait}`, { body: { input: {} } });
      expect(answer.status, wait).toBe(400);
      expect(message(answer)).toContain('wait must be a whole number of milliseconds from 1000 to 300000');
    }
  });

  it('a bad endpoint id in the path', async () => {
    running = await startTestServer({}, { clock: new ManualClock() });
    const answer = await call('POST', `${running.url}/v2/${'x'.repeat(129)}/run`, { body: { input: {} } });
    expect(answer.status).toBe(400);
    expect(errorCode(answer)).toBe('SW_INVALID_REQUEST');
  });
});

describe('404 and 405', () => {
  it('404 SW_ROUTE_NOT_FOUND for an unknown route, as JSON', async () => {
    running = await startTestServer();
    for (const path of ['/v2/ep/nope', '/nope', '/v2/ep/status']) {
      const answer = await call('GET', `${running.url}${path}`);
      expect(answer.status, path).toBe(404);
      expect(errorCode(answer)).toBe('SW_ROUTE_NOT_FOUND');
    }
  });

  it('405 SW_METHOD_NOT_ALLOWED with Allow for a known path and the wrong method', async () => {
    running = await startTestServer();
    const cases: Array<[string, string, string]> = [
      ['GET', '/v2/ep/run', 'POST'],
      ['GET', '/v2/ep/runsync', 'POST'],
      ['POST', '/v2/ep/status/abc', 'GET, HEAD'],
      ['DELETE', '/v2/ep/health', 'GET, HEAD'],
      ['GET', '/v2/ep/cancel/abc', 'POST'],
      ['GET', '/v2/ep/openai/v1/chat/completions', 'POST'],
      ['POST', '/metrics', 'GET, HEAD'],
    ];
    for (const [method, path, allow] of cases) {
      const answer = await call(method, `${running.url}${path}`);
      expect(answer.status, `${method} ${path}`).toBe(405);
      expect(errorCode(answer)).toBe('SW_METHOD_NOT_ALLOWED');
      expect(answer.headers.get('allow')).toBe(allow);
    }
  });

  it('405 even when the request says its (empty) body is JSON', async () => {
    running = await startTestServer();
    const answer = await call('PATCH', `${running.url}/v2/ep/run`, { headers: { 'content-type': 'application/json' } });
    expect(answer.status).toBe(405);
    expect(answer.headers.get('allow')).toBe('POST');
  });

  it('404 SW_ENDPOINT_NOT_FOUND for an endpoint the harness does not have (auto-create off)', async () => {
    running = await startTestServer({}, { autoCreateEndpoints: false, endpoints: ['known'] });
    const unknown = await call('POST', `${running.endpointUrl('other')}/run`, { body: { input: {} } });
    expect(unknown.status).toBe(404);
    expect(errorCode(unknown)).toBe('SW_ENDPOINT_NOT_FOUND');
    expect((await call('POST', `${running.endpointUrl('known')}/run`, { body: { input: {} } })).status).toBe(200);
  });
});

describe('413: per-route body limits (spec 8.1)', () => {
  /** A job request whose JSON is exactly `bytes` long. */
  function bodyOfSize(bytes: number): string {
    const shell = '{"input":{"pad":""}}';
    return `{"input":{"pad":"${'a'.repeat(bytes - shell.length)}"}}`;
  }

  it('a /run body of 10 MB + 1 byte gets 413 SW_PAYLOAD_TOO_LARGE; exactly 10 MB passes', async () => {
    running = await startTestServer({}, { clock: new ManualClock() });
    const tooLarge = await call('POST', `${running.endpointUrl()}/run`, { body: bodyOfSize(10_000_001) });
    expect(tooLarge.status).toBe(413);
    expect(errorCode(tooLarge)).toBe('SW_PAYLOAD_TOO_LARGE');
    expect((tooLarge.json as { error: { details: { limitBytes: number } } }).error.details.limitBytes).toBe(10_000_000);
    expect((await call('POST', `${running.endpointUrl()}/run`, { body: bodyOfSize(10_000_000) })).status).toBe(200);
  });

  it('a 15 MB /runsync passes; 20 MB + 1 byte does not', async () => {
    running = await startTestServer();
    stopWorker = startTestWorker(running.harness, async (job: { input: { pad: string } }) => ({ length: job.input.pad.length })).stop;
    const body = bodyOfSize(15_000_000);
    const answer = await call('POST', `${running.endpointUrl()}/runsync`, { body });
    expect(answer.status).toBe(200);
    expect(answer.json).toMatchObject({ status: 'COMPLETED', output: { length: 15_000_000 - '{"input":{"pad":""}}'.length } });
    const tooLarge = await call('POST', `${running.endpointUrl()}/runsync`, { body: bodyOfSize(20_000_001) });
    expect(tooLarge.status).toBe(413);
  });
});

describe('malformed URLs', () => {
  it('400 SW_INVALID_REQUEST as JSON for an over-long path parameter or a bad escape', async () => {
    running = await startTestServer();
    for (const path of [`/v2/${'x'.repeat(300)}/health`, '/v2/ep/status/%E0%A4%A']) {
      const answer = await call('GET', `${running.url}${path}`);
      expect(answer.status, path).toBe(400);
      expect(errorCode(answer)).toBe('SW_INVALID_REQUEST');
    }
  });
});
