/**
 * Endpoint ids the harness does not know, on a harness that makes endpoints on first use
 * (the default): a read (GET /health, /status, /stream, /requests, POST /cancel,
 * /purge-queue) on a misspelt id creates nothing (it used to add an endpoint row); the
 * first job sent to a new id makes it with one warning in the log, listed on the
 * dashboard's overview; once endpoints exist in /v1, a job sent to any other id gets the
 * service's 404 (SW_ENDPOINT_NOT_FOUND naming the known ids). Real HTTP on 127.0.0.1.
 */
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { call, errorCode, startTestServer, type TestServer } from '../../kit/index.js';

let running: TestServer | undefined;

afterEach(async () => {
  await running?.close();
  running = undefined;
});

/** A pino logger whose lines land in `lines`. */
function capturingLogger(): { logger: pino.Logger; lines: Array<{ level: number; msg: string; endpointId?: string }> } {
  const lines: Array<{ level: number; msg: string; endpointId?: string }> = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line.trim() !== '') lines.push(JSON.parse(line) as { level: number; msg: string });
      done();
    },
  });
  return { logger: pino({ level: 'info' }, sink), lines };
}

interface Overview {
  endpoints?: Array<{ id: string; createdOnUse?: boolean }>;
  createdOnUse: Array<{ id: string; at: number }>;
}

describe('reads of an unknown endpoint id', () => {
  it('create nothing: /health answers zeros, job routes 404, /requests is empty, /purge-queue removes 0 (rate limits on, as the CLI has them)', async () => {
    running = await startTestServer({ rateLimits: {} });
    const server = running;
    const typo = server.endpointUrl('my-endpiont');
    const health = await call('GET', `${typo}/health`);
    expect(health.status).toBe(200);
    expect(health.json).toMatchObject({
      jobs: { completed: 0, failed: 0, inProgress: 0, inQueue: 0, retried: 0 },
      workers: { idle: 0, running: 0, initializing: 0 },
    });
    for (const [method, path] of [
      ['GET', '/status/job-1'],
      ['GET', '/status-sync/job-1?wait=10'],
      ['GET', '/stream/job-1'],
      ['POST', '/cancel/job-1'],
      ['POST', '/retry/job-1'],
    ] as const) {
      const answer = await call(method, `${typo}${path}`);
      expect(answer.status, path).toBe(404);
      expect(errorCode(answer), path).toBe('SW_JOB_NOT_FOUND');
    }
    expect((await call('GET', `${typo}/requests`)).json).toMatchObject({ endpointId: 'my-endpiont', total: 0, requests: [] });
    expect((await call('POST', `${typo}/purge-queue`)).json).toEqual({ removed: 0, status: 'completed' });
    expect(server.harness.findEndpoint('my-endpiont')).toBeUndefined();
    expect([...server.harness.endpoints()].map((endpoint) => endpoint.id)).toEqual([]);
    expect(await server.harness.store.listEndpoints()).toEqual([]);
    const overview = (await call('GET', `${server.url}/ui/api/overview`)).json as Overview;
    expect(JSON.stringify(overview)).not.toContain('my-endpiont');
  });

  it("still reads an endpoint that exists: its job's status after a /run", async () => {
    running = await startTestServer();
    const { id } = (await call('POST', `${running.endpointUrl('real')}/run`, { body: { input: {} } })).json as { id: string };
    expect((await call('GET', `${running.endpointUrl('real')}/status/${id}`)).json).toMatchObject({ id, status: 'IN_QUEUE' });
    expect(((await call('GET', `${running.endpointUrl('real')}/health`)).json as { jobs: { inQueue: number } }).jobs.inQueue).toBe(1);
  });
});

describe('a job sent to a new endpoint id', () => {
  it('makes the endpoint with one warning in the log, listed as created on use on the overview', async () => {
    const { logger, lines } = capturingLogger();
    running = await startTestServer({ logger });
    for (let i = 0; i < 3; i++) expect((await call('POST', `${running.endpointUrl('fresh')}/run`, { body: { input: { i } } })).status).toBe(200);
    expect((await call('POST', `${running.endpointUrl('other')}/run`, { body: { input: {} } })).status).toBe(200);
    const warnings = lines.filter((line) => line.level === 40 && line.msg.includes('created on first use'));
    expect(warnings.map((line) => line.endpointId)).toEqual(['fresh', 'other']);
    running.harness.createEndpoint('made-at-start');
    const overview = (await call('GET', `${running.url}/ui/api/overview`)).json as Overview;
    expect(overview.createdOnUse.map((entry) => entry.id)).toEqual(['fresh', 'other']);
    // The endpoints table marks them (live ticks carry the same rows).
    expect(overview.endpoints?.map((row) => [row.id, row.createdOnUse ?? false])).toEqual([
      ['fresh', true],
      ['made-at-start', false],
      ['other', true],
    ]);
  });

  it('once endpoints exist in /v1: answers 404 SW_ENDPOINT_NOT_FOUND naming them, creates nothing, and serves the /v1 endpoint', async () => {
    running = await startTestServer();
    const server = running;
    const template = (
      await call('POST', `${server.url}/v1/templates`, { body: { name: 'known', imageName: 'example/worker:1', isServerless: true, category: 'CPU' } })
    ).json as { id: string };
    const created = await call('POST', `${server.url}/v1/endpoints`, { body: { name: 'known', templateId: template.id, workersMin: 0, workersMax: 1 } });
    expect(created.status).toBe(200);
    const { id } = created.json as { id: string };
    for (const path of ['/run', '/runsync?wait=1000', '/openai/v1/chat/completions']) {
      const answer = await call('POST', `${server.endpointUrl('not-there')}${path}`, { body: { input: {} } });
      expect(answer.status, path).toBe(404);
      expect(answer.json, path).toMatchObject({ error: { code: 'SW_ENDPOINT_NOT_FOUND', message: expect.stringContaining(id) } });
    }
    expect(server.harness.findEndpoint('not-there')).toBeUndefined();
    expect((await call('POST', `${server.endpointUrl(id)}/run`, { body: { input: {} } })).status).toBe(200);
  });

  it('after the last /v1 endpoint is deleted, its id answers 404 SW_ENDPOINT_NOT_FOUND (it accepted jobs no worker took)', async () => {
    running = await startTestServer();
    const server = running;
    const template = (
      await call('POST', `${server.url}/v1/templates`, { body: { name: 'gone', imageName: 'example/worker:1', isServerless: true, category: 'CPU' } })
    ).json as { id: string };
    const { id } = (await call('POST', `${server.url}/v1/endpoints`, { body: { name: 'gone', templateId: template.id, workersMin: 0, workersMax: 1 } }))
      .json as { id: string };
    expect((await call('POST', `${server.endpointUrl(id)}/run`, { body: { input: {} } })).status).toBe(200);
    expect((await call('DELETE', `${server.url}/v1/endpoints/${id}`)).status).toBeLessThan(300);
    for (const path of ['/run', '/runsync?wait=1000']) {
      const answer = await call('POST', `${server.endpointUrl(id)}${path}`, { body: { input: {} } });
      expect(answer.status, path).toBe(404);
      expect(answer.json, path).toMatchObject({ error: { code: 'SW_ENDPOINT_NOT_FOUND', message: expect.stringContaining('deleted') } });
    }
    expect(server.harness.findEndpoint(id)).toBeUndefined();
    // Any other id still works as before /v1 had endpoints (made on first use).
    expect((await call('POST', `${server.endpointUrl('fresh-after')}/run`, { body: { input: {} } })).status).toBe(200);
  });
});
