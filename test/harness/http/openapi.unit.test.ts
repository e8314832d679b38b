/**
 * /openapi.json, /docs and the queue API at the root, on a real server on 127.0.0.1:
 * the document passes a real OpenAPI 3.1 validator, its request schema is the
 * worker's zod input schema, and what a refused input gets is what the document says
 * (400 where the server checks input, a FAILED job where it does not, as on the platform).
 */
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { toDocumentSchema } from '../../../packages/platform/src/harness/openapi/index.js';
import { validateInput } from '../../../src/worker/index.js';
import { startTestWorker } from './helpers.js';
import { call, errorCode, startTestServer, type TestServer } from '../../kit/index.js';

const Input = z.object({ message: z.string().min(1), shout: z.boolean().default(false) });
const BAD = { input: { message: '' } };
const GOOD = { input: { message: 'hi', shout: true } };

let server: TestServer | undefined;
const workers: Array<{ stop(): Promise<void> }> = [];
afterEach(async () => {
  for (const worker of workers.splice(0)) await worker.stop();
  await server?.close();
  server = undefined;
});

type Doc = {
  paths: Record<string, Record<string, { description?: string; responses: Record<string, { description?: string; $ref?: string }> }>>;
  components: { schemas: Record<string, object> };
};

async function validDocument(url: string): Promise<Doc> {
  const answer = await call('GET', `${url}/openapi.json`);
  expect(answer.status).toBe(200);
  const validator = new Validator();
  const result = await validator.validate(answer.json as Parameters<Validator['validate']>[0]);
  expect(result.errors ?? [], JSON.stringify(result.errors)).toEqual([]);
  expect(result.valid).toBe(true);
  return answer.json as Doc;
}

function startEcho(harness: TestServer['harness']): void {
  workers.push(
    startTestWorker(harness, (async (job: { input: z.infer<typeof Input> }) => ({ echo: job.input.message })) as never, {
      inputSchema: Input,
      gpuSampling: false,
    }),
  );
}

describe('OpenAPI document and docs', () => {
  it('the local API (root endpoint, input checked): valid document, the zod schema in it, 400 for refused input', async () => {
    server = await startTestServer({
      rootEndpoint: 'ep',
      endpointInputs: { ep: { jsonSchema: toDocumentSchema(Input), check: (input) => validateInput(Input, input) } },
    });
    startEcho(server.harness);
    const doc = await validDocument(server.url);
    // The request body schema is the worker's input schema, and it refuses BAD.
    const requestSchema = doc.components.schemas.JobRequest_ep as { properties: { input: unknown } };
    expect(requestSchema.properties.input).toMatchObject({ type: 'object', properties: { message: { type: 'string', minLength: 1 } }, required: ['message'] });
    const check = new Ajv2020({ strict: false }).compile(requestSchema);
    expect(check(GOOD)).toBe(true);
    expect(check(BAD)).toBe(false);
    // Documented: 400 with SW_INPUT_VALIDATION, under /v2/ep and at the root.
    for (const path of ['/v2/ep/runsync', '/runsync', '/v2/ep/run', '/run']) {
      const op = doc.paths[path]?.post;
      expect(op?.responses['400']?.description, path).toContain('SW_INPUT_VALIDATION');
      const answer = await call('POST', `${server.url}${path}`, { body: BAD });
      expect(answer.status, path).toBe(400);
      expect(errorCode(answer)).toBe('SW_INPUT_VALIDATION');
      expect((answer.json as { error: { details: { issues: Array<{ path: string }> } } }).error.details.issues[0]?.path).toBe('message');
    }
    expect((await server.harness.endpoint('ep').health()).jobs.completed + (await server.harness.endpoint('ep').health()).jobs.failed).toBe(0);
  });

  it('the queue API at the root answers as under /v2/<endpoint>', async () => {
    server = await startTestServer({ rootEndpoint: 'ep' });
    startEcho(server.harness);
    const sync = await call('POST', `${server.url}/runsync`, { body: GOOD });
    expect(sync.json).toMatchObject({ status: 'COMPLETED', output: { echo: 'hi' } });
    const { id } = (await call('POST', `${server.url}/run`, { body: GOOD })).json as { id: string };
    const done = await call('GET', `${server.url}/status-sync/${id}?wait=30000`);
    expect(done.json).toMatchObject({ id, status: 'COMPLETED' });
    expect((await call('GET', `${server.url}/status/${id}`)).json).toMatchObject({ id, status: 'COMPLETED' });
    expect((await call('GET', `${server.url}/stream/${id}?wait=0`)).json).toMatchObject({ status: 'COMPLETED', stream: [] });
    expect(errorCode(await call('POST', `${server.url}/cancel/${id}`))).toBe('SW_CANCEL_NOT_ALLOWED');
    expect((await call('GET', `${server.url}/health`)).json).toMatchObject({ jobs: { completed: 2 } });
    expect((await call('GET', `${server.url}/v2/ep/status/${id}`)).json).toMatchObject({ id, status: 'COMPLETED' });
    // Other root paths stay unknown; /metrics is still the server's own.
    expect(errorCode(await call('GET', `${server.url}/nothing`))).toBe('SW_ROUTE_NOT_FOUND');
    expect((await call('GET', `${server.url}/metrics`)).status).toBe(200);
  });

  it('the harness (no input check, as on the platform): any input accepted, the worker FAILS the job, as documented', async () => {
    server = await startTestServer();
    startEcho(server.harness);
    const doc = await validDocument(server.url);
    const runsync = doc.paths['/v2/ep/runsync']?.post;
    expect(runsync?.description).toContain('/runsync then answers 200 with status FAILED');
    expect(runsync?.responses['400']?.$ref).toBe('#/components/responses/BadRequest');
    expect(doc.paths['/runsync']).toBeUndefined();
    // Every route of the queue API (issue 35), and the management API's.
    for (const route of ['status-sync/{jobId}', 'retry/{jobId}', 'purge-queue', 'requests']) expect(doc.paths[`/v2/ep/${route}`], route).toBeDefined();
    for (const path of ['/v1/endpoints', '/v1/endpoints/{id}', '/v1/templates/{id}/update', '/v1/pods']) expect(doc.paths[path], path).toBeDefined();
    const answer = await call('POST', `${server.url}/v2/ep/runsync`, { body: BAD });
    expect(answer.status).toBe(200);
    const record = answer.json as { status: string; error: string };
    expect(record.status).toBe('FAILED');
    expect(JSON.parse(record.error)).toMatchObject({ error_code: 'SW_INPUT_VALIDATION' });
    expect(JSON.parse(record.error).error_traceback).toBeUndefined();
  });

  it('/docs serves Swagger UI from node_modules (no CDN) on /openapi.json', async () => {
    server = await startTestServer();
    const page = await call('GET', `${server.url}/docs`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(page.text).not.toMatch(/https?:\/\//);
    for (const src of [...page.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1] ?? '')) {
      const asset = await call('GET', `${server.url}${src}`);
      expect(asset.status, src).toBe(200);
      expect(asset.text.length, src).toBeGreaterThan(10);
    }
    expect((await call('GET', `${server.url}/docs/init.js`)).text).toContain("fetch('/openapi.json'");
    expect((await call('GET', `${server.url}/docs/package.json`)).status).toBe(404);
  });
});
