/**
 * Bearer auth of the management API (spec 5): with a key configured, every route
 * answers 401 SW_UNAUTHORIZED without it or with a wrong one; without a key
 * configured, no check.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { caller, type ErrorBody } from './http.js';
import { startManagementServer, type RunningManagementServer } from './management-server.js';

const ROUTES: Array<[string, string, unknown?]> = [
  ['POST', '/templates', { name: 'n', imageName: 'i' }],
  ['GET', '/templates'],
  ['GET', '/templates/x'],
  ['POST', '/templates/x/update', { imageName: 'i' }],
  ['PATCH', '/templates/x', { imageName: 'i' }],
  ['DELETE', '/templates/x'],
  ['POST', '/networkvolumes', { dataCenterId: 'EU', name: 'v', size: 1 }],
  ['GET', '/networkvolumes'],
  ['GET', '/networkvolumes/x'],
  ['PATCH', '/networkvolumes/x', { size: 2 }],
  ['POST', '/networkvolumes/x/update', { size: 2 }],
  ['DELETE', '/networkvolumes/x'],
  ['POST', '/endpoints', { templateId: 't' }],
  ['GET', '/endpoints'],
  ['GET', '/endpoints/x'],
  ['PATCH', '/endpoints/x', { workersMax: 1 }],
  ['POST', '/endpoints/x/update', { workersMax: 1 }],
  ['DELETE', '/endpoints/x'],
  ['GET', '/pods'],
  ['GET', '/pods/x'],
];

describe('with an API key configured', () => {
  let server: RunningManagementServer;
  beforeAll(async () => {
    server = await startManagementServer({ apiKey: 'secret-key' });
  });
  afterAll(async () => {
    await server.close();
  });

  it.each(ROUTES)('%s %s: 401 without a key, 401 with a wrong key', async (method, path, body) => {
    const anonymous = await caller(server.baseUrl)<ErrorBody>(method, path, body);
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.error.code).toBe('SW_UNAUTHORIZED');
    expect(anonymous.body.error.message).toContain('Missing API key');
    const wrong = await caller(server.baseUrl, 'not-the-key')<ErrorBody>(method, path, body);
    expect(wrong.status).toBe(401);
    expect(wrong.body.error.message).toContain('Wrong API key');
  });

  it('nothing is created by a refused call', async () => {
    await caller(server.baseUrl)('POST', '/templates', { name: 'sneaky', imageName: 'i' });
    expect(server.store.listTemplates()).toEqual([]);
  });

  it('the right key, as "Bearer <key>", is let through', async () => {
    const reply = await caller(server.baseUrl, 'secret-key')('GET', '/templates');
    expect(reply.status).toBe(200);
  });
});

describe('without an API key configured', () => {
  it('lets calls through without Authorization', async () => {
    const server = await startManagementServer();
    try {
      expect((await caller(server.baseUrl)('GET', '/templates')).status).toBe(200);
    } finally {
      await server.close();
    }
  });
});
