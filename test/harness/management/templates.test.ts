/**
 * Template routes over real HTTP: the create defaults and every validation rule of
 * spec 2.2, the update rules of 2.3, unique names, list/get/delete.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Template } from '../../../packages/platform/src/harness/management/index.js';
import { caller, type Call, type ErrorBody } from './http.js';
import { startManagementServer, type RunningManagementServer } from './management-server.js';

let server: RunningManagementServer;
let call: Call;
let counter = 0;
/** A unique template name per test, so tests do not collide on the shared server. */
const uniqueName = (prefix: string) => `${prefix}-${(counter += 1)}`;

beforeAll(async () => {
  server = await startManagementServer({ apiKey: 'test-key' });
  call = caller(server.baseUrl, 'test-key');
});
afterAll(async () => {
  await server.close();
});

async function createTemplate(body: Record<string, unknown>): Promise<Template> {
  const reply = await call<Template>('POST', '/templates', body);
  expect(reply.status, JSON.stringify(reply.body)).toBe(200);
  return reply.body;
}

describe('POST /templates', () => {
  it('applies every default of the create input and fills the record fields', async () => {
    const name = uniqueName('defaults');
    const template = await createTemplate({ name, imageName: 'ghcr.io/org/worker:1' });
    expect(template).toEqual({
      id: expect.stringMatching(/^[a-z0-9]{10}$/),
      name,
      imageName: 'ghcr.io/org/worker:1',
      category: 'NVIDIA',
      containerDiskInGb: 50,
      dockerEntrypoint: [],
      dockerStartCmd: [],
      env: {},
      isPublic: false,
      isServerless: false,
      ports: ['8888/http', '22/tcp'],
      readme: '',
      volumeInGb: 20,
      volumeMountPath: '/workspace',
      isPlatform: false,
      earned: 0,
      runtimeInMin: 0,
    });
  });

  it('keeps every field it is given', async () => {
    const body = {
      name: uniqueName('full'),
      imageName: 'img:2',
      category: 'AMD',
      containerDiskInGb: 12,
      containerRegistryAuthId: 'auth-1',
      dockerEntrypoint: ['node'],
      dockerStartCmd: ['dist-worker/worker.js'],
      env: { LOG_LEVEL: 'debug', _X1: '' },
      isPublic: true,
      isServerless: true,
      ports: ['8000/http', '2222/tcp'],
      readme: '# hi',
      volumeInGb: 0,
      volumeMountPath: '/data',
    };
    const template = await createTemplate(body);
    expect(template).toMatchObject(body);
    const fetched = await call<Template>('GET', `/templates/${template.id}`);
    expect(fetched.body).toEqual(template);
  });

  it.each([
    ['name missing', { imageName: 'img' }, 'name', 'non-empty string', 'nothing'],
    ['name empty', { name: '  ', imageName: 'img' }, 'name', 'non-empty string', '"  "'],
    ['imageName missing', { name: 'x' }, 'imageName', 'image reference', 'nothing'],
    ['imageName with a space', { name: 'x', imageName: 'my image' }, 'imageName', 'without spaces', '"my image"'],
    ['category unknown', { name: 'x', imageName: 'i', category: 'TPU' }, 'category', 'NVIDIA, AMD, CPU', '"TPU"'],
    ['containerDiskInGb zero', { name: 'x', imageName: 'i', containerDiskInGb: 0 }, 'containerDiskInGb', 'at least 1 GB', '0'],
    ['containerDiskInGb fractional', { name: 'x', imageName: 'i', containerDiskInGb: 1.5 }, 'containerDiskInGb', 'integer', '1.5'],
    ['containerDiskInGb a string', { name: 'x', imageName: 'i', containerDiskInGb: '50' }, 'containerDiskInGb', 'integer', '"50"'],
    ['volumeInGb negative', { name: 'x', imageName: 'i', volumeInGb: -1 }, 'volumeInGb', 'at least 0 GB', '-1'],
    ['volumeMountPath relative', { name: 'x', imageName: 'i', volumeMountPath: 'data' }, 'volumeMountPath', 'absolute path', '"data"'],
    ['containerRegistryAuthId empty', { name: 'x', imageName: 'i', containerRegistryAuthId: '' }, 'containerRegistryAuthId', 'non-empty', '""'],
    ['dockerEntrypoint not a list', { name: 'x', imageName: 'i', dockerEntrypoint: 'node' }, 'dockerEntrypoint', 'array of strings', '"node"'],
    ['dockerStartCmd with a number', { name: 'x', imageName: 'i', dockerStartCmd: ['a', 1] }, 'dockerStartCmd.1', 'must be a string', '1'],
    ['env value a number', { name: 'x', imageName: 'i', env: { PORT: 8000 } }, 'env.PORT', 'must be a string', '8000'],
    ['env name with a dash', { name: 'x', imageName: 'i', env: { 'MY-VAR': 'x' } }, 'env.MY-VAR', 'names must match', '"MY-VAR"'],
    ['env not an object', { name: 'x', imageName: 'i', env: ['A=1'] }, 'env', 'object of string values', '["A=1"]'],
    ['isPublic a string', { name: 'x', imageName: 'i', isPublic: 'yes' }, 'isPublic', 'true or false', '"yes"'],
    ['isServerless a number', { name: 'x', imageName: 'i', isServerless: 1 }, 'isServerless', 'true or false', '1'],
    ['port without protocol', { name: 'x', imageName: 'i', ports: ['8888'] }, 'ports.0', '"<port>/<protocol>"', '"8888"'],
    ['port with a malformed protocol', { name: 'x', imageName: 'i', ports: ['53/u dp'] }, 'ports.0', 'http or tcp', '"53/u dp"'],
    ['port out of range', { name: 'x', imageName: 'i', ports: ['70000/tcp'] }, 'ports.0', '1 to 65535', '"70000/tcp"'],
    ['port listed twice', { name: 'x', imageName: 'i', ports: ['22/tcp', '22/tcp'] }, 'ports', 'same port twice', '["22/tcp","22/tcp"]'],
    ['readme not a string', { name: 'x', imageName: 'i', readme: 5 }, 'readme', 'Markdown string', '5'],
  ])('400 when %s, naming the field, what it allows and the value', async (_case, body, field, allowed, received) => {
    const reply = await call<ErrorBody>('POST', '/templates', body);
    expect(reply.status).toBe(400);
    expect(reply.body.error.code).toBe('SW_INVALID_TEMPLATE');
    expect(reply.body.error.message).toContain(field);
    expect(reply.body.error.message).toContain(allowed);
    expect(reply.body.error.message).toContain(`(got ${received})`);
    expect(reply.body.error.details?.fields).toContain(field);
  });

  it('400 on an unknown field, listing the allowed ones', async () => {
    const reply = await call<ErrorBody>('POST', '/templates', { name: 'x', imageName: 'i', imagename: 'typo' });
    expect(reply.status).toBe(400);
    expect(reply.body.error.code).toBe('SW_INVALID_TEMPLATE');
    expect(reply.body.error.message).toContain('unknown field imagename');
    expect(reply.body.error.message).toContain('allowed fields: name, imageName');
  });

  it('400 on a body that is not a JSON object', async () => {
    const reply = await call<ErrorBody>('POST', '/templates', ['name']);
    expect(reply.status).toBe(400);
    expect(reply.body.error.message).toContain('must be a JSON object');
  });

  it('400 on malformed JSON, through the shared error handler', async () => {
    const response = await fetch(`${server.baseUrl}/templates`, {
      method: 'POST',
      headers: { authorization: 'Bearer test-key', 'content-type': 'application/json' },
      body: '{"name": ',
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as ErrorBody).error.code).toBe('SW_INVALID_REQUEST');
  });

  it('400 SW_TEMPLATE_NAME_TAKEN on a duplicate name', async () => {
    const name = uniqueName('dup');
    const first = await createTemplate({ name, imageName: 'a' });
    const reply = await call<ErrorBody>('POST', '/templates', { name, imageName: 'b' });
    expect(reply.status).toBe(400);
    expect(reply.body.error.code).toBe('SW_TEMPLATE_NAME_TAKEN');
    expect(reply.body.error.message).toContain(`name "${name}"`);
    expect(reply.body.error.message).toContain(first.id);
  });
});

describe('POST /templates/{id}/update', () => {
  it('changes only the fields sent; the rest keep their value', async () => {
    const template = await createTemplate({ name: uniqueName('patch'), imageName: 'a:1', env: { A: '1' }, containerDiskInGb: 7 });
    const reply = await call<Template>('POST', `/templates/${template.id}/update`, { imageName: 'a:2', readme: 'new' });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ ...template, imageName: 'a:2', readme: 'new' });
  });

  it('PATCH /templates/{id} is the same update', async () => {
    const template = await createTemplate({ name: uniqueName('patch-alias'), imageName: 'a:1' });
    const reply = await call<Template>('PATCH', `/templates/${template.id}`, { volumeInGb: 5 });
    expect(reply.status).toBe(200);
    expect(reply.body.volumeInGb).toBe(5);
  });

  it.each([
    ['category', 'CPU'],
    ['isServerless', true],
  ])('400 SW_FIELD_NOT_UPDATABLE when the update names %s', async (field, value) => {
    const template = await createTemplate({ name: uniqueName('refuse'), imageName: 'a' });
    const reply = await call<ErrorBody>('POST', `/templates/${template.id}/update`, { imageName: 'b', [field]: value });
    expect(reply.status).toBe(400);
    expect(reply.body.error.code).toBe('SW_FIELD_NOT_UPDATABLE');
    expect(reply.body.error.message).toContain(`${field} cannot be changed by an update`);
    expect(reply.body.error.message).toContain(`(got ${JSON.stringify(value)})`);
    // Nothing changed: the whole update was refused.
    expect((await call<Template>('GET', `/templates/${template.id}`)).body.imageName).toBe('a');
  });

  it('400 SW_INVALID_TEMPLATE when a refused field comes with a malformed one', async () => {
    const template = await createTemplate({ name: uniqueName('mixed'), imageName: 'a' });
    const reply = await call<ErrorBody>('POST', `/templates/${template.id}/update`, { category: 'CPU', volumeInGb: -2 });
    expect(reply.status).toBe(400);
    expect(reply.body.error.code).toBe('SW_INVALID_TEMPLATE');
    expect(reply.body.error.message).toContain('category cannot be changed');
    expect(reply.body.error.message).toContain('volumeInGb must be an integer of at least 0 GB (got -2)');
  });

  it('validates updated values as create does', async () => {
    const template = await createTemplate({ name: uniqueName('upd-range'), imageName: 'a' });
    const reply = await call<ErrorBody>('POST', `/templates/${template.id}/update`, { ports: ['x/http'] });
    expect(reply.status).toBe(400);
    expect(reply.body.error.message).toContain('ports.0');
  });

  it('400 SW_TEMPLATE_NAME_TAKEN when renaming onto another template; renaming to its own name is fine', async () => {
    const taken = await createTemplate({ name: uniqueName('taken'), imageName: 'a' });
    const template = await createTemplate({ name: uniqueName('renamer'), imageName: 'a' });
    const clash = await call<ErrorBody>('POST', `/templates/${template.id}/update`, { name: taken.name });
    expect(clash.status).toBe(400);
    expect(clash.body.error.code).toBe('SW_TEMPLATE_NAME_TAKEN');
    const same = await call<Template>('POST', `/templates/${template.id}/update`, { name: template.name });
    expect(same.status).toBe(200);
  });

  it('404 SW_TEMPLATE_NOT_FOUND for an unknown id', async () => {
    const reply = await call<ErrorBody>('POST', '/templates/nosuchid/update', { imageName: 'x' });
    expect(reply.status).toBe(404);
    expect(reply.body.error.code).toBe('SW_TEMPLATE_NOT_FOUND');
    expect(reply.body.error.message).toContain('nosuchid');
  });
});

describe('list, get, delete', () => {
  it('lists templates in creation order, gets and deletes one', async () => {
    const a = await createTemplate({ name: uniqueName('list-a'), imageName: 'a' });
    const b = await createTemplate({ name: uniqueName('list-b'), imageName: 'b' });
    const list = await call<Template[]>('GET', '/templates');
    expect(list.status).toBe(200);
    const ids = list.body.map((template) => template.id);
    expect(ids.indexOf(a.id)).toBeLessThan(ids.indexOf(b.id));

    const removed = await call('DELETE', `/templates/${a.id}`);
    expect(removed.status).toBe(204);
    expect(removed.body).toBeUndefined();
    expect((await call<ErrorBody>('GET', `/templates/${a.id}`)).body.error.code).toBe('SW_TEMPLATE_NOT_FOUND');
    expect((await call<ErrorBody>('DELETE', `/templates/${a.id}`)).status).toBe(404);
    // The name is free again.
    await createTemplate({ name: a.name, imageName: 'again' });
  });

  it('404 for GET of an unknown id', async () => {
    const reply = await call<ErrorBody>('GET', '/templates/zzz');
    expect(reply.status).toBe(404);
    expect(reply.body.error.code).toBe('SW_TEMPLATE_NOT_FOUND');
  });
});
