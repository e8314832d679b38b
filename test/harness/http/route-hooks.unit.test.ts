/**
 * Hooks put on the routes that need them (http/route-hooks.ts), and the server's wiring of
 * them: the rate limit runs on the routes that count as an operation, the
 * unknown-endpoint check on the routes that submit jobs, each before the route's own
 * hooks and in the order given; a request no route matches runs neither.
 */
import Fastify, { type FastifyRequest } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { addRouteOnRequest } from '../../../packages/platform/src/harness/http/route-hooks.js';
import { isSubmitRoute } from '../../../packages/platform/src/harness/unknown-endpoints.js';
import { call, startTestServer, type TestServer } from '../../kit/index.js';

let running: TestServer | undefined;

afterEach(async () => {
  await running?.close();
  running = undefined;
});

describe('addRouteOnRequest', () => {
  it("runs each hook only on the routes it asks for, in the order given, before the route's own hooks", async () => {
    const app = Fastify();
    const ran: string[] = [];
    const mark =
      (name: string) =>
      (request: FastifyRequest, _reply: unknown, done: () => void): void => {
        ran.push(`${name} ${request.url}`);
        done();
      };
    addRouteOnRequest(app, (route) => route.config?.operation !== undefined, mark('rated'));
    addRouteOnRequest(app, (route) => route.url.endsWith('/run'), mark('submit'));
    await app.register(
      async (scope) => {
        scope.post('/:id/run', { config: { operation: 'run' }, onRequest: mark('own') }, async () => 'queued');
        scope.get('/:id/status', { config: { operation: 'status' } }, async () => 'status');
        scope.get('/files', async () => 'file');
      },
      { prefix: '/v2' },
    );
    await app.inject({ method: 'POST', url: '/v2/e/run' });
    await app.inject({ method: 'GET', url: '/v2/e/status' });
    await app.inject({ method: 'GET', url: '/v2/files' });
    const missing = await app.inject({ method: 'GET', url: '/v2/e/nothing' });
    expect(missing.statusCode).toBe(404);
    expect(ran).toEqual(['rated /v2/e/run', 'submit /v2/e/run', 'own /v2/e/run', 'rated /v2/e/status']);
    await app.close();
  });

  it('the unknown-endpoint check is for the routes that submit jobs', () => {
    for (const url of ['/v2/:endpointId/run', '/v2/:endpointId/runsync', '/v2/:endpointId/openai/v1/*', '/v2/:endpointId/openai/v1/models']) {
      expect({ url, submit: isSubmitRoute({ url }) }).toEqual({ url, submit: true });
    }
    for (const url of ['/v2/:endpointId/status/:jobId', '/v2/:endpointId/health', '/v2/:endpointId/job-take/:workerId', '/metrics', '/ui/*']) {
      expect({ url, submit: isSubmitRoute({ url }) }).toEqual({ url, submit: false });
    }
  });
});

describe('the harness server', () => {
  it('still limits the rate of a rated route; /metrics, no operation, is never limited', async () => {
    running = await startTestServer({ rateLimits: { windowMs: 3_600_000, requestsPerWorker: 1, limits: { status: { perWindow: 1 } } } });
    expect((await call('GET', `${running.endpointUrl()}/status/nope`)).status).toBe(404);
    const limited = await call('GET', `${running.endpointUrl()}/status/nope`);
    expect([limited.status, limited.json]).toEqual([429, { error: expect.objectContaining({ code: 'SW_RATE_LIMITED' }) }]);
    // /health and /metrics count as no operation: never limited.
    for (let i = 0; i < 3; i++) expect((await call('GET', `${running.endpointUrl()}/health`)).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await call('GET', `${running.url}/metrics`)).status).toBe(200);
  });
});
