/**
 * fastify's schema compilers replaced by refusing ones (harness/http/zod-only-schemas.ts): the
 * harness's routes validate with zod, so Ajv and fast-json-stringify are never loaded; a route
 * given a JSON schema fails at registration, saying why, and the harness's own routes still answer.
 */
import Fastify from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { ZOD_ONLY_SCHEMAS } from '../../../packages/platform/src/harness/http/zod-only-schemas.js';
import { startTestServer, type TestServer } from '../../kit/index.js';

let running: TestServer | undefined;

afterEach(async () => {
  await running?.close();
  running = undefined;
});

describe('fastify without JSON schema compilers', () => {
  it('refuses a route given a JSON schema for its body, naming zod', async () => {
    const app = Fastify({ schemaController: ZOD_ONLY_SCHEMAS });
    app.post('/x', { schema: { body: { type: 'object', properties: { a: { type: 'string' } } } } }, async () => ({ ok: true }));
    await expect(app.ready()).rejects.toThrow(/validate with zod/);
    await app.close();
  });

  it('refuses a route given a JSON schema for its reply', async () => {
    const app = Fastify({ schemaController: ZOD_ONLY_SCHEMAS });
    app.get('/x', { schema: { response: { 200: { type: 'object', properties: { ok: { type: 'boolean' } } } } } }, async () => ({ ok: true }));
    await expect(app.ready()).rejects.toThrow(/validate with zod/);
    await app.close();
  });

  it("serves the harness's routes: a job submitted and read back, a bad body refused by zod with the JSON error body", async () => {
    running = await startTestServer();
    const submitted = await fetch(`${running.endpointUrl()}/run`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ input: { n: 1 } }),
    });
    expect(submitted.status).toBe(200);
    const { id } = (await submitted.json()) as { id: string };
    const status = await fetch(`${running.endpointUrl()}/status/${id}`);
    expect(status.status).toBe(200);
    expect(((await status.json()) as { id: string }).id).toBe(id);
    const refused = await fetch(`${running.endpointUrl()}/run`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ input: 5 }),
    });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ error: { code: 'SW_INVALID_JOB_REQUEST', message: expect.stringContaining('input must be a JSON object') } });
  });
});
