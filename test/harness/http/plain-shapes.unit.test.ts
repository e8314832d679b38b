/**
 * The queue API's checks without zod (queue-api/plain-shapes.ts) answer exactly what the
 * zod schemas answer for the plain shapes, and step aside (undefined) for everything
 * else, so that zod parses it and names what is wrong.
 */
import { describe, expect, it } from 'vitest';
import { JobRequestSchema } from '../../../src/job/index.js';
import { EndpointParamsSchema, JobParamsSchema, StatusQuerySchema, WaitQuerySchema } from '../../../packages/platform/src/harness/queue-api/params.js';
import { lacksQueryKey, plainEndpointId, plainJobParams, plainJobRequest, plainWait } from '../../../packages/platform/src/harness/queue-api/plain-shapes.js';

describe('plain request shapes', () => {
  it('a body of {"input": {...}} alone: what JobRequestSchema answers (a copy of input); anything else is left to zod', () => {
    const plain = [{ input: {} }, { input: { prompt: 'hi', n: 1, nested: { a: [1, 2] } } }, JSON.parse('{"input":{"__proto__x":1}}') as unknown];
    for (const body of plain) {
      const fast = plainJobRequest(body);
      expect(fast).toEqual(JobRequestSchema.parse(body));
      expect(fast?.input).not.toBe((body as { input: unknown }).input);
    }
    const others: unknown[] = [
      undefined,
      null,
      'text',
      [],
      {},
      { input: null },
      { input: [] },
      { input: 'x' },
      { input: {}, webhook: 'https://example.com/hook' },
      { input: {}, policy: { ttl: 5 } },
      { input: {}, extra: 1 },
      { input: new Date(0) },
    ];
    for (const body of others) expect(plainJobRequest(body), JSON.stringify(body)).toBeUndefined();
  });

  it('path parameters: well-formed ids as the schemas answer them, malformed ones left to zod', () => {
    for (const endpointId of ['a', 'my-endpoint_1.v2', 'x'.repeat(128)]) {
      expect(plainEndpointId({ endpointId })).toBe(EndpointParamsSchema.parse({ endpointId }).endpointId);
      expect(plainJobParams({ endpointId, jobId: 'job-1' })).toEqual(JobParamsSchema.parse({ endpointId, jobId: 'job-1' }));
    }
    for (const endpointId of ['', 'has space', 'x'.repeat(129), 'ü', undefined, 5]) {
      expect(plainEndpointId({ endpointId })).toBeUndefined();
      expect(EndpointParamsSchema.safeParse({ endpointId }).success).toBe(false);
    }
    expect(plainJobParams({ endpointId: 'e', jobId: '' })).toBeUndefined();
    expect(plainJobParams({ endpointId: 'e', jobId: 'j'.repeat(201) })).toBeUndefined();
    expect(JobParamsSchema.safeParse({ endpointId: 'e', jobId: 'j'.repeat(201) }).success).toBe(false);
    expect(plainJobParams({ endpointId: 'e', jobId: 'j'.repeat(200) })).toEqual({ endpointId: 'e', jobId: 'j'.repeat(200) });
  });

  it("reads the router's own parameter objects and the query parser's (not plain objects): no zod for them either", async () => {
    const Fastify = (await import('fastify')).default;
    const app = Fastify();
    const seen: Array<{ params: unknown; query: unknown }> = [];
    app.post('/v2/:endpointId/runsync', async (request) => {
      seen.push({ params: request.params, query: request.query });
      return {};
    });
    app.get('/v2/:endpointId/status/:jobId', async (request) => {
      seen.push({ params: request.params, query: request.query });
      return {};
    });
    try {
      await app.inject({ method: 'POST', url: '/v2/my-endpoint/runsync?wait=5000', payload: { input: {} } });
      await app.inject({ method: 'GET', url: '/v2/my-endpoint/status/job-1' });
      const [runsync, status] = seen;
      expect(plainEndpointId(runsync?.params)).toBe('my-endpoint');
      expect(plainWait(runsync?.query)).toBe(5_000);
      expect(plainJobParams(status?.params)).toEqual({ endpointId: 'my-endpoint', jobId: 'job-1' });
      expect(plainWait(status?.query)).toBe(90_000);
      expect(lacksQueryKey(status?.query, 'ttl')).toBe(true);
    } finally {
      await app.close();
    }
  });

  it('wait and ttl queries: absent or in range as WaitQuerySchema answers; out of range or malformed left to zod', () => {
    for (const query of [undefined, {}, { wait: '1000' }, { wait: '300000' }, { wait: '90000' }, { other: 'x' }]) {
      expect(plainWait(query)).toBe(WaitQuerySchema.parse(query ?? {}).wait);
    }
    for (const query of [{ wait: '999' }, { wait: '300001' }, { wait: 'soon' }, { wait: '' }, { wait: ['1000', '2000'] }, { wait: '1e4' }]) {
      expect(plainWait(query), JSON.stringify(query)).toBeUndefined();
    }
    expect(lacksQueryKey(undefined, 'ttl')).toBe(true);
    expect(lacksQueryKey({}, 'ttl')).toBe(true);
    expect(StatusQuerySchema.parse({}).ttl).toBeUndefined();
    expect(lacksQueryKey({ ttl: '60000' }, 'ttl')).toBe(false);
    expect(lacksQueryKey({ ttl: '' }, 'ttl')).toBe(false);
  });
});
