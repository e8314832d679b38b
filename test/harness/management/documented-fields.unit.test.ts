/**
 * The endpoint and template fields the platform's REST reference documents, over real
 * HTTP: the bodies a real deploy client sends (every endpoint create field, a
 * `22/ssh` port, a template without `isServerless`) are accepted and round-trip
 * through create, get, update and list; invalid values keep their 400 naming the
 * field; an endpoint's executionTimeoutMs becomes its jobs' default timeout.
 */
import { Writable } from 'node:stream';
import Fastify, { type FastifyBaseLogger } from 'fastify';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Harness, ManualClock } from '../../../src/harness/index.js';
import { createHarnessServer } from '../../../packages/platform/src/harness/server-api.js';
import { installErrorHandler } from '../../../packages/platform/src/harness/http/error-reply.js';
import { InMemoryManagementStore, managementApi, type Endpoint, type Template } from '../../../packages/platform/src/harness/management/index.js';
import { caller, type Call, type ErrorBody } from './http.js';

/** What a deploy client written against the live service sends to create an endpoint. */
const DEPLOY_CLIENT_ENDPOINT = {
  name: 'deploy-client-endpoint',
  computeType: 'GPU',
  gpuTypeIds: ['NVIDIA GeForce RTX 4090', 'NVIDIA RTX A6000'],
  gpuCount: 2,
  dataCenterIds: ['EU-RO-1', 'US-TX-3'],
  allowedCudaVersions: ['12.4', '12.8'],
  executionTimeoutMs: 900_000,
  flashboot: true,
  scalerType: 'REQUEST_COUNT',
  scalerValue: 2,
  workersMin: 0,
  workersMax: 4,
  idleTimeout: 10,
};

const logLines: string[] = [];
let call: Call;
let close: () => Promise<void>;
let counter = 0;

beforeAll(async () => {
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logLines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  const app = Fastify({ loggerInstance: pino({ level: 'warn' }, sink) as FastifyBaseLogger });
  installErrorHandler(app);
  await app.register(managementApi, { store: new InMemoryManagementStore(), prefix: '/v1' });
  const address = await app.listen({ host: '127.0.0.1', port: 0 });
  call = caller(`${address}/v1`);
  close = () => app.close();
});
afterAll(async () => {
  await close();
});

async function template(extra: Record<string, unknown> = {}): Promise<Template> {
  counter += 1;
  const reply = await call<Template>('POST', '/templates', { name: `doc-template-${counter}`, imageName: 'ghcr.io/org/w:1', ...extra });
  expect(reply.status, JSON.stringify(reply.body)).toBe(200);
  return reply.body;
}

describe('what a real deploy client sends', () => {
  it('a template with "22/ssh" and no isServerless is created (ports kept, a warning logged) and backs an endpoint (warning)', async () => {
    const t = await template({ ports: ['8000/http', '22/ssh'], env: { MODEL: 'x' } });
    expect(t.ports).toEqual(['8000/http', '22/ssh']);
    expect(t.isServerless).toBe(false);
    expect(logLines.some((line) => line.includes('22/ssh') && line.includes('http and tcp'))).toBe(true);

    const reply = await call<Endpoint>('POST', '/endpoints', { ...DEPLOY_CLIENT_ENDPOINT, templateId: t.id });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    expect(reply.body).toMatchObject({ ...DEPLOY_CLIENT_ENDPOINT, templateId: t.id, workers: [], instanceIds: [] });
    expect(logLines.some((line) => line.includes(reply.body.id) && line.includes('created without isServerless'))).toBe(true);
  });

  it('a template created with isServerless false still cannot back an endpoint', async () => {
    const pod = await template({ isServerless: false });
    const reply = await call<ErrorBody>('POST', '/endpoints', { templateId: pod.id });
    expect(reply.status).toBe(400);
    expect(reply.body.error.code).toBe('SW_INVALID_ENDPOINT');
    expect(reply.body.error.message).toContain('isServerless false');
  });

  it('every documented field round-trips through create, get, update and list', async () => {
    const t = await template({ isServerless: true });
    const created = (await call<Endpoint>('POST', '/endpoints', { ...DEPLOY_CLIENT_ENDPOINT, templateId: t.id })).body;
    expect((await call<Endpoint>('GET', `/endpoints/${created.id}`)).body).toEqual(created);
    const patch = {
      scalerType: 'QUEUE_DELAY',
      scalerValue: 7,
      gpuCount: 1,
      flashboot: false,
      executionTimeoutMs: 60_000,
      dataCenterIds: ['EU-SE-1'],
      allowedCudaVersions: ['12.1'],
      workersMin: 1,
      idleTimeout: 60,
      name: 'renamed',
    };
    const updated = await call<Endpoint>('PATCH', `/endpoints/${created.id}`, patch);
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    expect(updated.body).toEqual({ ...created, ...patch });
    expect((await call<Endpoint>('GET', `/endpoints/${created.id}`)).body).toEqual(updated.body);
    expect((await call<Endpoint[]>('GET', '/endpoints')).body.find((e) => e.id === created.id)).toEqual(updated.body);
  });

  it('defaults as documented: GPU, gpuCount 1, vcpuCount 2, QUEUE_DELAY 4, executionTimeoutMs 600000, flashboot false', async () => {
    const t = await template({ isServerless: true });
    const created = (await call<Endpoint>('POST', '/endpoints', { templateId: t.id })).body;
    expect(created).toMatchObject({
      computeType: 'GPU',
      gpuTypeIds: [],
      gpuCount: 1,
      vcpuCount: 2,
      cpuFlavorIds: [],
      dataCenterIds: [],
      allowedCudaVersions: [],
      scalerType: 'QUEUE_DELAY',
      scalerValue: 4,
      executionTimeoutMs: 600_000,
      flashboot: false,
      workersMin: 0,
      workersMax: 3,
      idleTimeout: 5,
      workers: [],
      instanceIds: [],
    });
  });

  it('a CPU endpoint: computeType CPU from the template, cpuFlavorIds and vcpuCount give instanceIds', async () => {
    const cpu = await template({ isServerless: true, category: 'CPU' });
    const created = (await call<Endpoint>('POST', '/endpoints', { templateId: cpu.id, cpuFlavorIds: ['cpu3c', 'cpu5g'], vcpuCount: 4 })).body;
    expect(created).toMatchObject({ computeType: 'CPU', cpuFlavorIds: ['cpu3c', 'cpu5g'], vcpuCount: 4, instanceIds: ['cpu3c-4-8', 'cpu5g-4-16'] });
  });

  it.each([
    ['scalerType unknown', { scalerType: 'FAST' }, 'scalerType', 'QUEUE_DELAY, REQUEST_COUNT'],
    ['scalerValue 0', { scalerValue: 0 }, 'scalerValue', 'from 1'],
    ['executionTimeoutMs below 5 s', { executionTimeoutMs: 1_000 }, 'executionTimeoutMs', 'from 5000 to 604800000 ms'],
    ['computeType TPU', { computeType: 'TPU' }, 'computeType', 'GPU, CPU'],
    ['gpuCount 0', { gpuCount: 0 }, 'gpuCount', 'from 1'],
    ['flashboot a string', { flashboot: 'yes' }, 'flashboot', 'true or false'],
    ['cpuFlavorIds malformed', { cpuFlavorIds: ['fast'] }, 'cpuFlavorIds', 'cpu3c'],
    ['allowedCudaVersions malformed', { allowedCudaVersions: ['twelve'] }, 'allowedCudaVersions', '12.4'],
    ['vcpuCount fractional', { vcpuCount: 1.5 }, 'vcpuCount', 'integer'],
    ['an undocumented field', { gpuIds: 'AMPERE_16' }, 'unknown field gpuIds', 'allowed fields'],
  ])('400 SW_INVALID_ENDPOINT naming the field when %s', async (_case, extra, field, allowed) => {
    const t = await template({ isServerless: true });
    const reply = await call<ErrorBody>('POST', '/endpoints', { templateId: t.id, ...extra });
    expect(reply.status).toBe(400);
    expect(reply.body.error.code).toBe('SW_INVALID_ENDPOINT');
    expect(reply.body.error.message).toContain(field);
    expect(reply.body.error.message).toContain(allowed);
  });
});

describe('executionTimeoutMs of an endpoint', () => {
  it('is the execution timeout of its jobs that set none; a job policy still wins', async () => {
    const clock = new ManualClock();
    const harness = new Harness({ clock, autoCreateEndpoints: false });
    const server = await createHarnessServer({ harness, port: 0, rateLimits: false });
    try {
      const v1 = caller(`${server.url}/v1`);
      const t = (await v1<Template>('POST', '/templates', { name: 'timeouts', imageName: 'img:1', isServerless: true, category: 'CPU' })).body;
      const created = (await v1<Endpoint>('POST', '/endpoints', { templateId: t.id, executionTimeoutMs: 5_000 })).body;
      const jobs = harness.endpoint(created.id);
      const plain = await jobs.submit({ input: {} });
      const ownPolicy = await jobs.submit({ input: {}, policy: { executionTimeout: 60_000 } });
      expect(await jobs.tryTake('w1', 2)).toHaveLength(2);
      clock.advance(5_001);
      expect((await jobs.status(plain.id)).status).toBe('TIMED_OUT');
      expect((await jobs.status(ownPolicy.id)).status).toBe('IN_PROGRESS');

      // An update changes the default of jobs that start later.
      await v1('PATCH', `/endpoints/${created.id}`, { executionTimeoutMs: 20_000 });
      const later = await jobs.submit({ input: {} });
      await jobs.tryTake('w1', 1);
      clock.advance(10_000);
      expect((await jobs.status(later.id)).status).toBe('IN_PROGRESS');
      clock.advance(10_001);
      expect((await jobs.status(later.id)).status).toBe('TIMED_OUT');
    } finally {
      await server.close();
      await harness.close();
    }
  });
});
