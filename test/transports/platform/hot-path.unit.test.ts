/**
 * The shortcuts of the platform transport's hot path (issue 19) answer what the slow
 * path answered: the take answer's plain-shape check against DeliveredJobSchema, the
 * hand-built URLs against appendParams, and the HTTP client's parsed-once origin
 * against a URL whose path node:http must see normalised, or that carries credentials.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { PlatformHttp } from '../../../src/transports/platform/http-client.js';
import { readTakeAnswer } from '../../../src/transports/platform/take-answer.js';
import { appendParams, buildPlatformUrls, parsePlatformEnv } from '../../../src/transports/platform/index.js';
import { startScriptedServer, type ScriptedServer } from './scripted-server.js';

function take(body: unknown): ReturnType<typeof readTakeAnswer> {
  return readTakeAnswer({ status: 200, contentType: 'application/json', text: JSON.stringify(body) });
}

describe('readTakeAnswer', () => {
  it('keeps every key of a plain job and its whole attempt number', () => {
    expect(take({ id: 'a', input: { x: 1 }, webhook: 'http://h', attempt: 2 })).toEqual({
      kind: 'jobs',
      jobs: [{ id: 'a', input: { x: 1 }, webhook: 'http://h', attempt: 2 }],
      invalid: 0,
    });
  });

  it('leaves out an attempt that is not a whole number from 1, as the schema does', () => {
    for (const attempt of [0, 1.5, '2', null, -1]) {
      const outcome = take({ id: 'a', input: 'in', attempt });
      expect(outcome).toEqual({ kind: 'jobs', jobs: [{ id: 'a', input: 'in' }], invalid: 0 });
    }
  });

  it('counts items without a usable id or input as invalid, in a batch beside good ones', () => {
    const outcome = take([{ id: '', input: 1 }, { id: 'b', input: null }, { id: 7, input: 1 }, { input: 1 }, 'text', [], { id: 'ok', input: 0 }]);
    expect(outcome).toEqual({ kind: 'jobs', jobs: [{ id: 'ok', input: 0 }], invalid: 6 });
  });
});

describe('buildPlatformUrls', () => {
  it('builds the same take, done and stream URLs as appendParams, whichever way the templates end', () => {
    for (const suffix of ['?', '', '?x=1', '?x=1&']) {
      const env = parsePlatformEnv({
        RUNPOD_WEBHOOK_GET_JOB: `http://p/v2/job-take/$ID${suffix}`,
        RUNPOD_WEBHOOK_POST_OUTPUT: `http://p/v2/job-done/$RUNPOD_POD_ID/$ID${suffix}`,
        RUNPOD_WEBHOOK_POST_STREAM: `http://p/v2/job-stream/$RUNPOD_POD_ID/$ID${suffix}`,
      });
      const urls = buildPlatformUrls(env, 'w 1');
      expect(urls.take(true)).toBe(appendParams(`http://p/v2/job-take/w 1${suffix}`, { job_in_progress: '1' }));
      expect(urls.takeBatch(8, false)).toBe(appendParams(`http://p/v2/job-take-batch/w 1${suffix}`, { batch_size: 8, job_in_progress: '0' }));
      expect(urls.done('j/1', true, 3)).toBe(appendParams(`http://p/v2/job-done/w 1/j%2F1${suffix}`, { isStream: true, attempt: 3 }));
      expect(urls.stream('j', undefined)).toBe(appendParams(`http://p/v2/job-stream/w 1/j${suffix}`, { isStream: false }));
    }
  });

  it('puts the job id wherever $ID stands, every time it stands there', () => {
    const env = parsePlatformEnv({
      RUNPOD_WEBHOOK_GET_JOB: 'http://p/job-take/$ID',
      RUNPOD_WEBHOOK_POST_OUTPUT: 'http://p/done/$ID/again/$ID',
    });
    expect(buildPlatformUrls(env, 'w').done('j', false)).toBe('http://p/done/j/again/j?isStream=false');
  });
});

describe('PlatformHttp targets', () => {
  let server: ScriptedServer | undefined;
  const clients: PlatformHttp[] = [];
  afterEach(async () => {
    for (const client of clients.splice(0)) await client.close();
    await server?.close();
  });

  it('sends the path and query as given, a path with a space percent-encoded, and credentials as basic auth', async () => {
    server = await startScriptedServer(() => ({ status: 200, body: 'ok' }));
    const client = new PlatformHttp();
    clients.push(client);
    const origin = server.origin;
    expect((await client.get(`${origin}/a/b?x=1&y=%2F`, { timeoutMs: 5_000 })).text).toBe('ok');
    await client.post(`${origin}/with space/j?isStream=false`, '{}', { timeoutMs: 5_000 });
    const withUser = origin.replace('http://', 'http://user:pw@');
    await client.get(`${withUser}/auth`, { timeoutMs: 5_000 });
    await client.get(origin, { timeoutMs: 5_000 });
    await client.get(`${origin}?only=query`, { timeoutMs: 5_000 });
    await client.get(`${origin}/frag?x=1#part`, { timeoutMs: 5_000 });
    expect(server.requests.map((request) => request.url)).toEqual([
      '/a/b?x=1&y=%2F',
      '/with%20space/j?isStream=false',
      '/auth',
      '/',
      '/?only=query',
      '/frag?x=1',
    ]);
    expect(server.requests[2]?.headers.authorization).toBe(`Basic ${Buffer.from('user:pw').toString('base64')}`);
  });

  it('rejects every call under a signal when it aborts, and a later call under it at once', async () => {
    server = await startScriptedServer(() => ({ status: 200, body: 'late', delayMs: 5_000 }));
    const client = new PlatformHttp();
    clients.push(client);
    const controller = new AbortController();
    const calls = [1, 2, 3].map((n) => client.get(`${server!.origin}/slow/${n}`, { signal: controller.signal, timeoutMs: 10_000 }));
    controller.abort(new Error('stopping'));
    for (const call of calls) await expect(call).rejects.toThrow('stopping');
    await expect(client.get(`${server.origin}/after`, { signal: controller.signal, timeoutMs: 10_000 })).rejects.toThrow('stopping');
  });
});
