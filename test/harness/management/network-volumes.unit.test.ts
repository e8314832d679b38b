/**
 * Network volume routes over real HTTP: every rule of spec 2.4 (size 0..4000, an
 * update must grow the size, dataCenterId refused on update), list/get/delete.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NetworkVolume } from '../../../packages/platform/src/harness/management/index.js';
import { caller, type Call, type ErrorBody } from './http.js';
import { startManagementServer, type RunningManagementServer } from './management-server.js';

let server: RunningManagementServer;
let call: Call;

beforeAll(async () => {
  server = await startManagementServer({ apiKey: 'vol-key' });
  call = caller(server.baseUrl, 'vol-key');
});
afterAll(async () => {
  await server.close();
});

async function createVolume(size: number, name = 'data'): Promise<NetworkVolume> {
  const reply = await call<NetworkVolume>('POST', '/networkvolumes', { dataCenterId: 'EU-RO-1', name, size });
  expect(reply.status, JSON.stringify(reply.body)).toBe(200);
  return reply.body;
}

describe('POST /networkvolumes', () => {
  it('creates a volume with dataCenterId, id, name, size', async () => {
    const volume = await createVolume(100, 'models');
    expect(volume).toEqual({ id: expect.stringMatching(/^[a-z0-9]{10}$/), dataCenterId: 'EU-RO-1', name: 'models', size: 100 });
  });

  it('accepts both ends of the size range, 0 and 4000', async () => {
    expect((await createVolume(0)).size).toBe(0);
    expect((await createVolume(4000)).size).toBe(4000);
  });

  it('names need not be unique', async () => {
    const a = await createVolume(1, 'same');
    const b = await createVolume(1, 'same');
    expect(a.id).not.toBe(b.id);
  });

  it.each([
    ['size 4001', { dataCenterId: 'EU', name: 'v', size: 4001 }, 'size', 'from 0 to 4000 GB', '4001'],
    ['size -1', { dataCenterId: 'EU', name: 'v', size: -1 }, 'size', 'from 0 to 4000 GB', '-1'],
    ['size 1.5', { dataCenterId: 'EU', name: 'v', size: 1.5 }, 'size', 'integer from 0 to 4000', '1.5'],
    ['size a string', { dataCenterId: 'EU', name: 'v', size: '10' }, 'size', 'integer from 0 to 4000', '"10"'],
    ['size missing', { dataCenterId: 'EU', name: 'v' }, 'size', 'integer from 0 to 4000', 'nothing'],
    ['dataCenterId missing', { name: 'v', size: 1 }, 'dataCenterId', 'non-empty string', 'nothing'],
    ['name empty', { dataCenterId: 'EU', name: '', size: 1 }, 'name', 'non-empty string', '""'],
  ])('400 SW_INVALID_NETWORK_VOLUME when %s', async (_case, body, field, allowed, received) => {
    const reply = await call<ErrorBody>('POST', '/networkvolumes', body);
    expect(reply.status).toBe(400);
    expect(reply.body.error.code).toBe('SW_INVALID_NETWORK_VOLUME');
    expect(reply.body.error.message).toContain(field);
    expect(reply.body.error.message).toContain(allowed);
    expect(reply.body.error.message).toContain(`(got ${received})`);
  });

  it('400 on an unknown field', async () => {
    const reply = await call<ErrorBody>('POST', '/networkvolumes', { dataCenterId: 'EU', name: 'v', size: 1, sizeGb: 2 });
    expect(reply.status).toBe(400);
    expect(reply.body.error.message).toContain('unknown field sizeGb');
  });
});

describe('PATCH /networkvolumes/{id}', () => {
  it('grows a volume and renames it', async () => {
    const volume = await createVolume(10);
    const grown = await call<NetworkVolume>('PATCH', `/networkvolumes/${volume.id}`, { size: 11 });
    expect(grown.status).toBe(200);
    expect(grown.body).toEqual({ ...volume, size: 11 });
    const renamed = await call<NetworkVolume>('PATCH', `/networkvolumes/${volume.id}`, { name: 'renamed' });
    expect(renamed.body).toEqual({ ...volume, size: 11, name: 'renamed' });
    expect((await call<NetworkVolume>('GET', `/networkvolumes/${volume.id}`)).body).toEqual(renamed.body);
  });

  it('POST /networkvolumes/{id}/update is the same update', async () => {
    const volume = await createVolume(10);
    const grown = await call<NetworkVolume>('POST', `/networkvolumes/${volume.id}/update`, { size: 20 });
    expect(grown.body.size).toBe(20);
  });

  it.each([
    ['shrinking', 50],
    ['keeping the same size', 100],
  ])('400 SW_NETWORK_VOLUME_SIZE_NOT_GREATER when %s', async (_case, size) => {
    const volume = await createVolume(100);
    const reply = await call<ErrorBody>('PATCH', `/networkvolumes/${volume.id}`, { size });
    expect(reply.status).toBe(400);
    expect(reply.body.error.code).toBe('SW_NETWORK_VOLUME_SIZE_NOT_GREATER');
    expect(reply.body.error.message).toContain('size must be greater than the current size of 100 GB');
    expect(reply.body.error.message).toContain(`got ${size}`);
    expect((await call<NetworkVolume>('GET', `/networkvolumes/${volume.id}`)).body.size).toBe(100);
  });

  it('400 when growing past 4000', async () => {
    const volume = await createVolume(3999);
    const reply = await call<ErrorBody>('PATCH', `/networkvolumes/${volume.id}`, { size: 4001 });
    expect(reply.status).toBe(400);
    expect(reply.body.error.code).toBe('SW_INVALID_NETWORK_VOLUME');
    expect(reply.body.error.message).toContain('size must be an integer from 0 to 4000 GB (got 4001)');
  });

  it('400 SW_FIELD_NOT_UPDATABLE when the update names dataCenterId', async () => {
    const volume = await createVolume(10);
    const reply = await call<ErrorBody>('PATCH', `/networkvolumes/${volume.id}`, { dataCenterId: 'US-TX-3', size: 20 });
    expect(reply.status).toBe(400);
    expect(reply.body.error.code).toBe('SW_FIELD_NOT_UPDATABLE');
    expect(reply.body.error.message).toContain('dataCenterId cannot be changed by an update');
    expect(reply.body.error.message).toContain('(got "US-TX-3")');
    expect((await call<NetworkVolume>('GET', `/networkvolumes/${volume.id}`)).body).toEqual(volume);
  });

  it('404 SW_NETWORK_VOLUME_NOT_FOUND for an unknown id', async () => {
    const reply = await call<ErrorBody>('PATCH', '/networkvolumes/nope', { size: 5 });
    expect(reply.status).toBe(404);
    expect(reply.body.error.code).toBe('SW_NETWORK_VOLUME_NOT_FOUND');
  });
});

describe('list, get, delete', () => {
  it('lists, gets and deletes volumes', async () => {
    const volume = await createVolume(7, 'to-delete');
    const list = await call<NetworkVolume[]>('GET', '/networkvolumes');
    expect(list.body).toContainEqual(volume);
    expect((await call('DELETE', `/networkvolumes/${volume.id}`)).status).toBe(204);
    const gone = await call<ErrorBody>('GET', `/networkvolumes/${volume.id}`);
    expect(gone.status).toBe(404);
    expect(gone.body.error.code).toBe('SW_NETWORK_VOLUME_NOT_FOUND');
    expect((await call('DELETE', `/networkvolumes/${volume.id}`)).status).toBe(404);
  });
});
