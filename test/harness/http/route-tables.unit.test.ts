/**
 * The route tables (packages/platform/src/harness/http/route-spec.ts and the tables of the
 * queue API, the worker API and the management API) against a real server on 127.0.0.1:
 * the server registers exactly the routes the list has (the tables' and the few listed
 * by hand), and /openapi.json lists exactly the declared routes users call, with the
 * bodies and replies of their zod schemas.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fullPath, openApiPath } from '../../../packages/platform/src/harness/http/route-spec.js';
import { MANAGEMENT_ROUTES } from '../../../packages/platform/src/harness/management/management-routes.js';
import { QUEUE_API_ROUTES } from '../../../packages/platform/src/harness/queue-api/queue-routes.js';
import { WORKER_API_ROUTES } from '../../../packages/platform/src/harness/worker-api/worker-routes.js';
import { call, errorCode, startTestServer } from '../../kit/index.js';
import { startReliabilityServer, type ReliabilityServer } from '../../reliability/support/reliability-server.js';
import { DECLARED_ROUTES, HARNESS_ROUTES, STREAMING_ROUTES, registeredRouteCount } from '../../reliability/support/routes.js';

let server: ReliabilityServer;
beforeAll(async () => {
  server = await startReliabilityServer();
});
afterAll(async () => {
  await server.close();
});

type Operation = { operationId: string; requestBody?: { content: { 'application/json': { schema: { $ref?: string } } } } };
type Doc = { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, object> } };

describe('route tables', () => {
  it('the server registers every listed route and no other', () => {
    const listed = [...HARNESS_ROUTES, ...STREAMING_ROUTES];
    const missing = listed.filter((route) => !server.server.app.hasRoute({ method: route.method, url: route.path }));
    expect(missing).toEqual([]);
    // No route twice in the list, and as many as fastify has: the two sets are the same.
    expect(new Set(listed.map((route) => `${route.method} ${route.path}`)).size).toBe(listed.length);
    expect(registeredRouteCount(server.server.app)).toBe(listed.length);
  });

  it('every route but the /lb pass-through comes from a table', () => {
    const byHand = HARNESS_ROUTES.filter((route) => !DECLARED_ROUTES.includes(route));
    expect(byHand.every((route) => route.path.startsWith('/lb/'))).toBe(true);
    // The tables that the document is generated from are in the list as they are.
    const listed = new Set(DECLARED_ROUTES.map((route) => `${route.method} ${route.path}`));
    for (const route of [...QUEUE_API_ROUTES, ...WORKER_API_ROUTES, ...MANAGEMENT_ROUTES]) expect(listed.has(`${route.method} ${fullPath(route)}`)).toBe(true);
  });

  it('/openapi.json has one operation per declared route users call, and no other', async () => {
    const doc = (await call('GET', `${server.origin}/openapi.json`)).json as Doc;
    await call('POST', `${server.origin}/v2/ep/run`, { body: { input: {} } });
    const documented = (await call('GET', `${server.origin}/openapi.json`)).json as Doc;
    const expected = [
      ...MANAGEMENT_ROUTES.map((route) => `${route.method} ${openApiPath(fullPath(route))} ${route.operationId}`),
      ...QUEUE_API_ROUTES.map((route) => `${route.method} ${openApiPath(fullPath(route)).replace('{endpointId}', 'ep')} ${route.operationId}_ep`),
    ].sort();
    const listed = Object.entries(documented.paths)
      .flatMap(([path, methods]) => Object.entries(methods).map(([method, op]) => `${method.toUpperCase()} ${path} ${op.operationId}`))
      .sort();
    expect(listed).toEqual(expected);
    // Before any job the endpoint is unknown: only the management API.
    expect(Object.keys(doc.paths).every((path) => path.startsWith('/v1/'))).toBe(true);
  });

  it('the root copy of --serve-api lists exactly the queue routes the server answers at the root', async () => {
    const rooted = await startTestServer({ rootEndpoint: 'ep' });
    try {
      const doc = (await call('GET', `${rooted.url}/openapi.json`)).json as Doc;
      const rootPaths = Object.keys(doc.paths).filter((path) => !path.startsWith('/v1/') && !path.startsWith('/v2/'));
      expect(rootPaths.length).toBeGreaterThan(0);
      for (const path of rootPaths) {
        for (const method of Object.keys(doc.paths[path] ?? {})) {
          const url = `${rooted.url}${path.replace('{jobId}', 'no-such-job')}${path === '/runsync' ? '?wait=1000' : ''}`;
          const answer = await call(method.toUpperCase(), url, method === 'post' ? { body: { input: {} } } : {});
          expect([200, 404, 409], `${method} ${path}`).toContain(answer.status);
          expect(errorCode(answer), `${method} ${path}`).not.toBe('SW_ROUTE_NOT_FOUND');
        }
      }
      // /logs is /v2's only.
      expect(doc.paths['/logs']).toBeUndefined();
      expect(doc.paths['/v2/ep/logs']).toBeDefined();
    } finally {
      await rooted.close();
    }
  });

  it('documents the management bodies and records from their zod schemas', async () => {
    const doc = (await call('GET', `${server.origin}/openapi.json`)).json as Doc;
    const create = doc.paths['/v1/templates']?.post?.requestBody?.content['application/json'].schema;
    expect(create).toEqual({ $ref: '#/components/schemas/TemplateCreate' });
    // strict: unknown keywords and formats fail here, so the document carries only standard ones.
    const ajv = new Ajv2020({ strict: true, strictRequired: false, strictTypes: false });
    const checkCreate = ajv.compile(doc.components.schemas.TemplateCreate ?? {});
    expect(checkCreate({ name: 't', imageName: 'img:1' })).toBe(true);
    // What the server refuses, the document refuses: no imageName, an unknown field.
    expect(checkCreate({ name: 't' })).toBe(false);
    expect(checkCreate({ name: 't', imageName: 'img:1', colour: 'red' })).toBe(false);
    // The record the server answers passes the documented record schema.
    const made = await call('POST', `${server.origin}/v1/templates`, { body: { name: 't', imageName: 'img:1', isServerless: true } });
    expect(made.status).toBe(200);
    expect(ajv.compile(doc.components.schemas.Template ?? {})(made.json)).toBe(true);
    const endpoint = await call('POST', `${server.origin}/v1/endpoints`, { body: { templateId: (made.json as { id: string }).id, computeType: 'CPU' } });
    expect(endpoint.status, endpoint.text).toBe(200);
    expect(ajv.compile(doc.components.schemas.Endpoint ?? {})(endpoint.json)).toBe(true);
    // The list refers to the same record schema.
    expect(doc.paths['/v1/endpoints']?.get).toMatchObject({
      responses: { '200': { content: { 'application/json': { schema: { items: { $ref: '#/components/schemas/Endpoint' } } } } } },
    });
  });
});
