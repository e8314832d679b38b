/**
 * The typed management client (src/harness/management/management-client.ts) against the real plugin
 * on loopback, and against a plain HTTP server that answers foreign error bodies.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManagementClient, managementClientFromEnv } from '../../../packages/platform/src/harness/management/management-client.js';
import { ENDPOINT_ROUTES, POD_ROUTES, TEMPLATE_ROUTES } from '../../../packages/platform/src/harness/management/management-routes.js';
import { ServerlessWorkerError, isServerlessWorkerError } from '../../../src/job/index.js';
import { startManagementServer, type RunningManagementServer } from './management-server.js';

let server: RunningManagementServer;
let client: ManagementClient;

beforeAll(async () => {
  server = await startManagementServer({ apiKey: 'client-key' });
  client = new ManagementClient({ baseUrl: server.baseUrl, apiKey: 'client-key' });
});
afterAll(async () => {
  await server.close();
});

/** The error a promise rejects with. */
async function failure(promise: Promise<unknown>): Promise<ServerlessWorkerError> {
  try {
    await promise;
  } catch (error) {
    expect(isServerlessWorkerError(error)).toBe(true);
    return error as ServerlessWorkerError;
  }
  throw new Error('expected a rejection');
}

describe('ManagementClient against the harness', () => {
  it('creates, finds, updates, lists, gets and deletes templates', async () => {
    const created = await client.createTemplate({ name: 'client-t', imageName: 'img:1', isServerless: true, category: 'CPU' });
    expect(created).toMatchObject({ name: 'client-t', imageName: 'img:1', category: 'CPU', containerDiskInGb: 50 });
    expect((await client.findTemplateByName('client-t'))?.id).toBe(created.id);
    expect(await client.findTemplateByName('no-such-name')).toBeUndefined();
    const updated = await client.updateTemplate(created.id, { imageName: 'img:2' });
    expect(updated.imageName).toBe('img:2');
    expect((await client.getTemplate(created.id)).imageName).toBe('img:2');
    expect((await client.listTemplates()).map((t) => t.id)).toContain(created.id);

    const endpoint = await client.createEndpoint({ templateId: created.id, workersMax: 2 });
    expect(endpoint).toMatchObject({ templateId: created.id, workersMax: 2, version: 1 });
    await client.updateTemplate(created.id, { readme: 'x' });
    expect((await client.getEndpoint(endpoint.id)).version).toBe(2);
    expect((await client.updateEndpoint(endpoint.id, { idleTimeout: 60 })).idleTimeout).toBe(60);
    expect((await client.listEndpoints()).map((e) => e.id)).toContain(endpoint.id);
    await client.deleteEndpoint(endpoint.id);
    await client.deleteTemplate(created.id);
    expect((await failure(client.getTemplate(created.id))).code).toBe('SW_TEMPLATE_NOT_FOUND');
  });

  it('creates, grows, lists and deletes network volumes', async () => {
    const volume = await client.createNetworkVolume({ dataCenterId: 'EU-RO-1', name: 'v', size: 10 });
    expect(await client.updateNetworkVolume(volume.id, { size: 20 })).toEqual({ ...volume, size: 20 });
    expect((await client.getNetworkVolume(volume.id)).size).toBe(20);
    expect((await client.listNetworkVolumes()).map((v) => v.id)).toContain(volume.id);
    await client.deleteNetworkVolume(volume.id);
  });

  it('call(route, params, body): any route of the table, typed from its schemas, the path parameters encoded', async () => {
    const template = await client.call(TEMPLATE_ROUTES.create, {}, { name: 'by-call', imageName: 'img:1', isServerless: true });
    // The PATCH form, which the named updateTemplate (the spec's POST .../update) does not use.
    expect((await client.call(TEMPLATE_ROUTES.update, { id: template.id }, { readme: 'patched' })).readme).toBe('patched');
    const endpoint = await client.call(ENDPOINT_ROUTES.create, {}, { templateId: template.id, computeType: 'CPU' });
    expect((await client.call(ENDPOINT_ROUTES.updatePost, { id: endpoint.id }, { workersMax: 1 })).workersMax).toBe(1);
    // An id with characters a path cannot carry as they are reaches the server as that id.
    expect((await failure(client.call(POD_ROUTES.get, { id: 'a/b?c' }))).message).toContain('No pod with id "a/b?c"');
    await client.call(ENDPOINT_ROUTES.delete, { id: endpoint.id });
    expect(await client.call(TEMPLATE_ROUTES.delete, { id: template.id })).toBeUndefined();
  });

  it('lists pods (none without a registry) and 404s an unknown one', async () => {
    expect(await client.listPods()).toEqual([]);
    expect((await failure(client.getPod('p'))).code).toBe('SW_POD_NOT_FOUND');
  });

  it("throws the server's code with a one-line message carrying its message and the HTTP status", async () => {
    await client.createTemplate({ name: 'dup-client', imageName: 'i' });
    const error = await failure(client.createTemplate({ name: 'dup-client', imageName: 'i' }));
    expect(error.code).toBe('SW_TEMPLATE_NAME_TAKEN');
    expect(error.message).toContain('name "dup-client" is already used');
    expect(error.message).toContain('(SW_TEMPLATE_NAME_TAKEN; HTTP 400 from POST ');
    expect(error.message).not.toContain('\n');
    expect(error.details).toMatchObject({ httpStatus: 400, method: 'POST', serverCode: 'SW_TEMPLATE_NAME_TAKEN' });

    const shrink = await client.createNetworkVolume({ dataCenterId: 'EU', name: 'v', size: 10 });
    const shrinkError = await failure(client.updateNetworkVolume(shrink.id, { size: 5 }));
    expect(shrinkError.code).toBe('SW_NETWORK_VOLUME_SIZE_NOT_GREATER');
  });

  it('401 without the key', async () => {
    const anonymous = new ManagementClient({ baseUrl: server.baseUrl });
    const error = await failure(anonymous.listTemplates());
    expect(error.code).toBe('SW_UNAUTHORIZED');
    expect(error.message).toContain('Missing API key');
  });

  it('reads the URL and the key from the environment, RUNPOD_API_KEY as a fallback', async () => {
    const fromEnv = managementClientFromEnv({ env: { SERVERLESS_WORKER_API_URL: server.baseUrl, RUNPOD_API_KEY: 'client-key' } });
    expect(fromEnv.baseUrl).toBe(server.baseUrl);
    expect(Array.isArray(await fromEnv.listTemplates())).toBe(true);
    const preferred = managementClientFromEnv({
      baseUrl: server.baseUrl,
      env: { SERVERLESS_WORKER_API_KEY: 'client-key', RUNPOD_API_KEY: 'wrong' },
    });
    expect(Array.isArray(await preferred.listTemplates())).toBe(true);
    expect(managementClientFromEnv({ env: {} }).baseUrl).toBe('http://127.0.0.1:8000/v1');
  });

  it('refuses a base URL that is not http(s)', () => {
    expect(() => new ManagementClient({ baseUrl: 'ftp://example.com/v1' })).toThrow(/baseUrl must be an http/);
  });
});

describe('ManagementClient against other servers', () => {
  let foreign: Server;
  let foreignUrl: string;
  beforeAll(async () => {
    foreign = createServer((request, response) => {
      if (request.url?.startsWith('/v1/templates')) {
        response.writeHead(500, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ error: 'database is on fire\nsecond line' }));
      } else if (request.url?.startsWith('/v1/networkvolumes')) {
        response.writeHead(502, { 'content-type': 'text/html' });
        response.end('<html>Bad Gateway</html>');
      } else {
        response.writeHead(200, { 'content-type': 'text/plain' });
        response.end('not json');
      }
    });
    await new Promise<void>((resolve) => foreign.listen(0, '127.0.0.1', resolve));
    foreignUrl = `http://127.0.0.1:${(foreign.address() as AddressInfo).port}/v1`;
  });
  afterAll(async () => {
    await new Promise((resolve) => foreign.close(resolve));
  });

  it('an unknown error body becomes SW_MANAGEMENT_API_ERROR with the server message on one line', async () => {
    const error = await failure(new ManagementClient({ baseUrl: foreignUrl }).listTemplates());
    expect(error.code).toBe('SW_MANAGEMENT_API_ERROR');
    expect(error.message).toBe(`database is on fire second line (HTTP 500 from GET ${foreignUrl}/templates)`);
  });

  it('a non-JSON error body is quoted', async () => {
    const error = await failure(new ManagementClient({ baseUrl: foreignUrl }).listNetworkVolumes());
    expect(error.code).toBe('SW_MANAGEMENT_API_ERROR');
    expect(error.message).toContain('<html>Bad Gateway</html>');
  });

  it('a 200 that is not JSON is SW_MANAGEMENT_UNREACHABLE', async () => {
    const error = await failure(new ManagementClient({ baseUrl: foreignUrl }).listPods());
    expect(error.code).toBe('SW_MANAGEMENT_UNREACHABLE');
    expect(error.message).toContain('not JSON');
  });

  it('a closed port is SW_MANAGEMENT_UNREACHABLE naming the URL and the cause', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(closed.address() as AddressInfo).port}/v1`;
    await new Promise((resolve) => closed.close(resolve));
    const error = await failure(new ManagementClient({ baseUrl: url }).listTemplates());
    expect(error.code).toBe('SW_MANAGEMENT_UNREACHABLE');
    expect(error.message).toBe(`Cannot reach the management API: GET ${url}/templates: ECONNREFUSED`);
  });
});
