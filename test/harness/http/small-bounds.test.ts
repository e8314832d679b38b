/**
 * Issue 32 item 8, over HTTP on 127.0.0.1:
 * - credentials in a registered load-balancing worker URL are never shown: the workers
 *   list (and the dashboard, which reads the same view) shows `***@` in their place;
 * - an empty job-done body is refused 400 SW_INVALID_REQUEST and leaves the job running
 *   (it used to end it COMPLETED with no output); `{}` (a handler that returned nothing)
 *   still completes it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { call, errorCode, freePort, startTestServer, type TestServer } from '../../kit/index.js';

let server: TestServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('load-balancing worker URLs', () => {
  it('shows a registered URL with its user and password replaced by ***', async () => {
    server = await startTestServer();
    const port = await freePort();
    const registered = await call('POST', `${server.url}/v2/lb-ep/load-balancing/workers`, {
      body: { url: `http://alice:s3cret@127.0.0.1:${port}/app`, healthUrl: `http://bob:hunter2@127.0.0.1:${port}`, workerId: 'w-cred' },
    });
    expect(registered.status).toBe(201);
    const listed = await call('GET', `${server.url}/v2/lb-ep/load-balancing/workers`);
    const text = JSON.stringify(listed.json);
    expect(text).not.toContain('s3cret');
    expect(text).not.toContain('alice');
    expect(text).not.toContain('hunter2');
    expect(listed.json).toMatchObject({ workers: [{ id: 'w-cred', url: `http://***@127.0.0.1:${port}/app`, healthUrl: `http://***@127.0.0.1:${port}/` }] });
    const health = await call('GET', `${server.url}/v2/lb-ep/health`);
    expect(JSON.stringify(health.json)).not.toContain('s3cret');
  });
});

describe('job-done bodies', () => {
  it('refuses an empty job-done body with 400 and leaves the job running; a later result ends it', async () => {
    server = await startTestServer();
    const url = server.endpointUrl();
    const { id } = (await call('POST', `${url}/run`, { body: { input: { n: 1 } } })).json as { id: string };
    expect((await call('GET', `${url}/job-take/w1`)).status).toBe(200);
    for (const body of ['', '   ']) {
      const empty = await fetch(`${url}/job-done/w1/${id}?isStream=false`, { method: 'POST', body, headers: { 'content-type': 'application/json' } });
      expect(empty.status).toBe(400);
      expect(((await empty.json()) as { error: { code: string; message: string } }).error).toMatchObject({
        code: 'SW_INVALID_REQUEST',
        message: expect.stringContaining('job-done body is empty'),
      });
    }
    expect((await call('GET', `${url}/status/${id}`)).json).toMatchObject({ status: 'IN_PROGRESS' });
    const done = await call('POST', `${url}/job-done/w1/${id}`, { body: { output: { ok: true } } });
    expect(done.status).toBe(200);
    expect((await call('GET', `${url}/status/${id}`)).json).toMatchObject({ status: 'COMPLETED', output: { ok: true } });
  });

  it('still completes a job on {} (a handler that returned nothing)', async () => {
    server = await startTestServer();
    const url = server.endpointUrl();
    const { id } = (await call('POST', `${url}/run`, { body: { input: { n: 1 } } })).json as { id: string };
    expect((await call('GET', `${url}/job-take/w1`)).status).toBe(200);
    const done = await call('POST', `${url}/job-done/w1/${id}`, { body: {} });
    expect(done.status, errorCode(done) as string).toBe(200);
    expect((await call('GET', `${url}/status/${id}`)).json).toMatchObject({ status: 'COMPLETED' });
  });
});
