/**
 * Endpoint routes over real HTTP: create (spec 2.6) with GPU types in priority order,
 * the fit with the template, the hooks the job harness listens on, the rolling
 * release recorded when a template in use is updated, list/get/update/delete.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Endpoint, EndpointHooks, NetworkVolume, Template } from '../../../packages/platform/src/harness/management/index.js';
import { caller, type Call, type ErrorBody } from './http.js';
import { startManagementServer, type RunningManagementServer } from './management-server.js';

/** Records what the plugin tells the job harness; can be told to refuse one id. */
class RecordingHooks implements EndpointHooks {
  readonly created: string[] = [];
  readonly deleted: string[] = [];
  refuseNext = false;
  onEndpointCreated(id: string): void {
    if (this.refuseNext) {
      this.refuseNext = false;
      throw new Error(`cannot serve ${id}`);
    }
    this.created.push(id);
  }
  onEndpointDeleted(id: string): void {
    this.deleted.push(id);
  }
}

let server: RunningManagementServer;
let call: Call;
const hooks = new RecordingHooks();
let counter = 0;

beforeAll(async () => {
  server = await startManagementServer({ apiKey: 'ep-key', endpointHooks: hooks });
  call = caller(server.baseUrl, 'ep-key');
});
afterAll(async () => {
  await server.close();
});

async function template(extra: Record<string, unknown> = {}): Promise<Template> {
  counter += 1;
  const reply = await call<Template>('POST', '/templates', {
    name: `ep-template-${counter}`,
    imageName: 'ghcr.io/org/worker:1',
    isServerless: true,
    ...extra,
  });
  expect(reply.status, JSON.stringify(reply.body)).toBe(200);
  return reply.body;
}

async function endpoint(body: Record<string, unknown>): Promise<Endpoint> {
  const reply = await call<Endpoint>('POST', '/endpoints', body);
  expect(reply.status, JSON.stringify(reply.body)).toBe(200);
  return reply.body;
}

const GPUS = ['NVIDIA GeForce RTX 4090', 'NVIDIA RTX A6000', 'NVIDIA A100 80GB PCIe'];

describe('POST /endpoints', () => {
  it('records the fields, keeps gpuTypeIds in priority order, starts at version 1, tells the hooks', async () => {
    const t = await template();
    const created = await endpoint({
      name: 'llm',
      templateId: t.id,
      gpuTypeIds: GPUS,
      workersMin: 1,
      workersMax: 5,
      idleTimeout: 30,
    });
    expect(created).toEqual({
      id: expect.stringMatching(/^[a-z0-9]{14}$/),
      name: 'llm',
      templateId: t.id,
      gpuTypeIds: GPUS,
      workersMin: 1,
      workersMax: 5,
      idleTimeout: 30,
      computeType: 'GPU',
      gpuCount: 1,
      cpuFlavorIds: [],
      vcpuCount: 2,
      dataCenterIds: [],
      allowedCudaVersions: [],
      executionTimeoutMs: 600_000,
      flashboot: false,
      scalerType: 'QUEUE_DELAY',
      scalerValue: 4,
      instanceIds: [],
      workers: [],
      version: 1,
      releases: [{ version: 1, reason: 'created', templateId: t.id, changedFields: [], createdAt: created.createdAt }],
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    expect(hooks.created).toContain(created.id);
    expect((await call<Endpoint>('GET', `/endpoints/${created.id}`)).body).toEqual(created);
  });

  it('defaults: name from the template, workersMin 0, workersMax 3, idleTimeout 5', async () => {
    const t = await template();
    const created = await endpoint({ templateId: t.id, gpuTypeIds: ['AMD Instinct MI300X OAM'] });
    expect(created).toMatchObject({ name: t.name, workersMin: 0, workersMax: 3, idleTimeout: 5 });
  });

  it('a CPU template needs no GPU types, and refuses them', async () => {
    const cpu = await template({ category: 'CPU' });
    expect((await endpoint({ templateId: cpu.id })).gpuTypeIds).toEqual([]);
    const reply = await call<ErrorBody>('POST', '/endpoints', { templateId: cpu.id, gpuTypeIds: [GPUS[0]] });
    expect(reply.status).toBe(400);
    expect(reply.body.error.code).toBe('SW_INVALID_ENDPOINT');
    expect(reply.body.error.message).toContain('gpuTypeIds must be empty for a CPU endpoint (computeType CPU; got ["NVIDIA GeForce RTX 4090"])');
  });

  it('a GPU template without gpuTypeIds takes any GPU type (as the service does)', async () => {
    const gpu = await template({ category: 'AMD' });
    expect(await endpoint({ templateId: gpu.id })).toMatchObject({ computeType: 'GPU', gpuTypeIds: [] });
  });

  it("a template's category only files it: computeType CPU on a template left at the default category is accepted", async () => {
    // No category sent: the template is NVIDIA, the spec's default (spec 2.2).
    const plain = await template();
    expect(plain.category).toBe('NVIDIA');
    const cpu = await endpoint({ templateId: plain.id, computeType: 'CPU', cpuFlavorIds: ['cpu3c'], vcpuCount: 2 });
    expect(cpu).toMatchObject({ computeType: 'CPU', gpuTypeIds: [], instanceIds: ['cpu3c-2-4'] });
    // And the other way: GPU workers on a template filed as CPU.
    const filedCpu = await template({ category: 'CPU' });
    expect(await endpoint({ templateId: filedCpu.id, computeType: 'GPU', gpuTypeIds: [GPUS[0]] })).toMatchObject({ computeType: 'GPU' });
    // Moving an endpoint to a template of another category keeps its computeType.
    const moved = await call<Endpoint>('PATCH', `/endpoints/${cpu.id}`, { templateId: filedCpu.id });
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    expect(moved.body).toMatchObject({ templateId: filedCpu.id, computeType: 'CPU', version: 2 });
    const back = await call<Endpoint>('PATCH', `/endpoints/${cpu.id}`, { templateId: plain.id });
    expect(back.body).toMatchObject({ templateId: plain.id, computeType: 'CPU', version: 3 });
  });

  it('refuses a Pod template (isServerless false)', async () => {
    const pod = await template({ isServerless: false });
    const reply = await call<ErrorBody>('POST', '/endpoints', { templateId: pod.id, gpuTypeIds: GPUS });
    expect(reply.status).toBe(400);
    expect(reply.body.error.code).toBe('SW_INVALID_ENDPOINT');
    expect(reply.body.error.message).toContain('isServerless false');
  });

  it('404 SW_TEMPLATE_NOT_FOUND when templateId names no template', async () => {
    const reply = await call<ErrorBody>('POST', '/endpoints', { templateId: 'ghost', gpuTypeIds: GPUS });
    expect(reply.status).toBe(404);
    expect(reply.body.error.code).toBe('SW_TEMPLATE_NOT_FOUND');
    expect(reply.body.error.message).toBe('templateId "ghost" names no template');
  });

  it.each([
    ['templateId missing', { templateId: undefined }, 'templateId', 'non-empty string', 'nothing'],
    ['workersMin negative', { workersMin: -1 }, 'workersMin', 'at least 0', '-1'],
    ['workersMax fractional', { workersMax: 2.5 }, 'workersMax', 'integer', '2.5'],
    ['idleTimeout 0', { idleTimeout: 0 }, 'idleTimeout', 'from 1 to 3600 seconds', '0'],
    ['idleTimeout 3601', { idleTimeout: 3601 }, 'idleTimeout', 'from 1 to 3600 seconds', '3601'],
    ['gpuTypeIds a string', { gpuTypeIds: 'NVIDIA' }, 'gpuTypeIds', 'priority order', '"NVIDIA"'],
    ['gpuTypeIds twice the same', { gpuTypeIds: ['A', 'A'] }, 'gpuTypeIds', 'same GPU type twice', '["A","A"]'],
    ['workersMin above workersMax', { workersMin: 4, workersMax: 2 }, 'workersMin', 'not be greater than workersMax', '{"templateId"'],
  ])('400 SW_INVALID_ENDPOINT when %s', async (_case, extra, field, allowed, received) => {
    const t = await template();
    const reply = await call<ErrorBody>('POST', '/endpoints', { templateId: t.id, gpuTypeIds: GPUS, ...extra });
    expect(reply.status).toBe(400);
    expect(reply.body.error.code).toBe('SW_INVALID_ENDPOINT');
    expect(reply.body.error.message).toContain(field);
    expect(reply.body.error.message).toContain(allowed);
    expect(reply.body.error.message).toContain(`(got ${received}`);
  });

  it('mounts an existing network volume; 404 for an unknown one; the volume cannot be deleted while mounted', async () => {
    const t = await template();
    const volume = (await call<NetworkVolume>('POST', '/networkvolumes', { dataCenterId: 'EU', name: 'v', size: 10 })).body;
    const created = await endpoint({ templateId: t.id, gpuTypeIds: GPUS, networkVolumeId: volume.id });
    expect(created.networkVolumeId).toBe(volume.id);
    const unknown = await call<ErrorBody>('POST', '/endpoints', { templateId: t.id, gpuTypeIds: GPUS, networkVolumeId: 'nope' });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('SW_NETWORK_VOLUME_NOT_FOUND');
    const inUse = await call<ErrorBody>('DELETE', `/networkvolumes/${volume.id}`);
    expect(inUse.status).toBe(409);
    expect(inUse.body.error.code).toBe('SW_NETWORK_VOLUME_IN_USE');
    expect(inUse.body.error.details?.endpointIds).toEqual([created.id]);
  });

  it('when the job harness refuses the endpoint, it is not kept', async () => {
    const t = await template();
    const before = (await call<Endpoint[]>('GET', '/endpoints')).body.length;
    hooks.refuseNext = true;
    const reply = await call<ErrorBody>('POST', '/endpoints', { templateId: t.id, gpuTypeIds: GPUS });
    expect(reply.status).toBe(500);
    expect(reply.body.error.code).toBe('SW_INTERNAL');
    expect((await call<Endpoint[]>('GET', '/endpoints')).body.length).toBe(before);
  });
});

describe('rolling releases', () => {
  it('updating a template records a release on every endpoint that uses it, and only on those', async () => {
    const used = await template({ env: { MODEL: 'a' } });
    const other = await template();
    const first = await endpoint({ templateId: used.id, gpuTypeIds: GPUS });
    const second = await endpoint({ templateId: used.id, gpuTypeIds: [GPUS[1]] });
    const bystander = await endpoint({ templateId: other.id, gpuTypeIds: GPUS });

    const update = await call<Template>('POST', `/templates/${used.id}/update`, { imageName: 'ghcr.io/org/worker:2', env: { MODEL: 'b' } });
    expect(update.status).toBe(200);

    for (const id of [first.id, second.id]) {
      const after = (await call<Endpoint>('GET', `/endpoints/${id}`)).body;
      expect(after.version).toBe(2);
      expect(after.releases).toHaveLength(2);
      expect(after.releases[1]).toEqual({
        version: 2,
        reason: 'template-update',
        templateId: used.id,
        changedFields: ['imageName', 'env'],
        createdAt: expect.any(String),
      });
    }
    const untouched = (await call<Endpoint>('GET', `/endpoints/${bystander.id}`)).body;
    expect(untouched.version).toBe(1);

    // A second update rolls again; the history keeps every release.
    await call('POST', `/templates/${used.id}/update`, { readme: 'v3' });
    const third = (await call<Endpoint>('GET', `/endpoints/${first.id}`)).body;
    expect(third.version).toBe(3);
    expect(third.releases.map((release) => [release.version, release.reason, release.changedFields])).toEqual([
      [1, 'created', []],
      [2, 'template-update', ['imageName', 'env']],
      [3, 'template-update', ['readme']],
    ]);
  });

  it('pointing an endpoint at another template records a template-change release', async () => {
    const a = await template();
    const b = await template();
    const created = await endpoint({ templateId: a.id, gpuTypeIds: GPUS });
    const moved = await call<Endpoint>('PATCH', `/endpoints/${created.id}`, { templateId: b.id });
    expect(moved.status).toBe(200);
    expect(moved.body.version).toBe(2);
    expect(moved.body.releases[1]).toMatchObject({ version: 2, reason: 'template-change', templateId: b.id });
    // Scaling changes are not releases.
    const scaled = await call<Endpoint>('POST', `/endpoints/${created.id}/update`, { workersMax: 9, gpuTypeIds: [GPUS[2], GPUS[0]] });
    expect(scaled.body).toMatchObject({ version: 2, workersMax: 9, gpuTypeIds: [GPUS[2], GPUS[0]] });
  });

  it('a template in use cannot be deleted', async () => {
    const t = await template();
    const created = await endpoint({ templateId: t.id, gpuTypeIds: GPUS });
    const reply = await call<ErrorBody>('DELETE', `/templates/${t.id}`);
    expect(reply.status).toBe(409);
    expect(reply.body.error.code).toBe('SW_TEMPLATE_IN_USE');
    expect(reply.body.error.details?.endpointIds).toEqual([created.id]);
  });
});

describe('update, list, delete', () => {
  it('checks the merged endpoint on update', async () => {
    const t = await template();
    const created = await endpoint({ templateId: t.id, gpuTypeIds: GPUS, workersMin: 1, workersMax: 2 });
    const reply = await call<ErrorBody>('PATCH', `/endpoints/${created.id}`, { workersMin: 3 });
    expect(reply.status).toBe(400);
    expect(reply.body.error.code).toBe('SW_INVALID_ENDPOINT');
    expect(reply.body.error.message).toContain('got workersMin 3, workersMax 2');
    const unknown = await call<ErrorBody>('PATCH', `/endpoints/${created.id}`, { scalerKind: 'QUEUE_DELAY' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.message).toContain('unknown field scalerKind');
  });

  it('lists endpoints, deletes one and tells the hooks; 404 afterwards', async () => {
    const t = await template();
    const created = await endpoint({ templateId: t.id, gpuTypeIds: GPUS });
    expect((await call<Endpoint[]>('GET', '/endpoints')).body.map((e) => e.id)).toContain(created.id);
    expect((await call('DELETE', `/endpoints/${created.id}`)).status).toBe(204);
    expect(hooks.deleted).toContain(created.id);
    const gone = await call<ErrorBody>('GET', `/endpoints/${created.id}`);
    expect(gone.status).toBe(404);
    expect(gone.body.error.code).toBe('SW_ENDPOINT_NOT_FOUND');
    expect((await call('DELETE', `/endpoints/${created.id}`)).status).toBe(404);
    // With its only endpoint gone, the template can be deleted.
    expect((await call('DELETE', `/templates/${t.id}`)).status).toBe(204);
  });
});
