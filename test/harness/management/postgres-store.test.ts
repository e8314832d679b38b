/**
 * The management store on PostgreSQL: the conformance suite (with peers: other store
 * instances on the same database, as other harness processes), and through real harness
 * servers: /v1 records survive a restart, and two harnesses on one database share them
 * (an endpoint created through one is listed, served and updated through the other).
 * Each test on a fresh database of the run's embedded PostgreSQL server.
 */
import { describe, expect, it } from 'vitest';
import { Harness } from '../../../src/harness/index.js';
import { createHarnessServer, type HarnessServer } from '../../../packages/platform/src/harness/server-api.js';
import { PostgresJobStore } from '../../../packages/platform/src/harness/store/postgres/postgres-job-store.js';
import type { Endpoint, ManagementStore, Template } from '../../../packages/platform/src/harness/management/index.js';
import { PostgresManagementStore } from '../../../packages/platform/src/harness/management/store/postgres-management-store.js';
import { createTestDatabase } from '../../postgres/test-database.js';
import { call } from '../../kit/index.js';
import { describeManagementStore } from './management-store-conformance.js';

describeManagementStore(
  'postgres',
  async () => {
    const database = await createTestDatabase();
    const stores: ManagementStore[] = [new PostgresManagementStore(await database.connect(2))];
    return {
      store: stores[0] as ManagementStore,
      openPeer: async () => {
        const peer = new PostgresManagementStore(await database.connect(2));
        stores.push(peer);
        return peer;
      },
      close: async () => {
        for (const store of stores) await store.close();
        await database.drop();
      },
    };
  },
  true,
);

const harnessOn = (url: string): Promise<HarnessServer> => createHarnessServer({ store: url, port: 0, rateLimits: false });

async function json<T>(method: string, url: string, body?: unknown): Promise<{ status: number; body: T }> {
  const answer = await call(method, url, body !== undefined ? { body } : {});
  return { status: answer.status, body: answer.json as T };
}

describe('the management API on PostgreSQL (createHarnessServer({ store }))', () => {
  it('keeps templates, volumes and endpoints across a restart, and serves the endpoint at once after it', async () => {
    const database = await createTestDatabase();
    let server: HarnessServer | undefined;
    try {
      server = await harnessOn(database.url);
      const template = (
        await json<Template>('POST', `${server.url}/v1/templates`, { name: 'kept', imageName: 'me/worker:1', isServerless: true, category: 'CPU' })
      ).body;
      const volume = (await json<{ id: string }>('POST', `${server.url}/v1/networkvolumes`, { name: 'models', size: 10, dataCenterId: 'EU-RO-1' })).body;
      const created = await json<Endpoint>('POST', `${server.url}/v1/endpoints`, {
        templateId: template.id,
        workersMax: 2,
        executionTimeoutMs: 60_000,
        networkVolumeId: volume.id,
      });
      expect(created.status).toBe(200);
      await server.close();
      server = undefined;

      server = await harnessOn(database.url);
      expect((await json<Template[]>('GET', `${server.url}/v1/templates`)).body).toEqual([template]);
      expect((await json<Array<{ id: string }>>('GET', `${server.url}/v1/networkvolumes`)).body.map((v) => v.id)).toEqual([volume.id]);
      const after = await json<Endpoint>('GET', `${server.url}/v1/endpoints/${created.body.id}`);
      expect(after.body).toEqual(created.body);
      // The same name is still taken after the restart.
      const again = await json<{ error: { code: string } }>('POST', `${server.url}/v1/templates`, {
        name: 'kept',
        imageName: 'me/worker:2',
        isServerless: true,
      });
      expect(again.body.error.code).toBe('SW_TEMPLATE_NAME_TAKEN');
      const health = await call('GET', `${server.url}/v2/${created.body.id}/health`);
      expect(health.status).toBe(200);
    } finally {
      await server?.close();
      await database.drop();
    }
  });

  it('a harness that creates no endpoint on first use serves one created through another harness, and still refuses unknown ids', async () => {
    const database = await createTestDatabase();
    const servers: HarnessServer[] = [];
    const stores: ManagementStore[] = [];
    try {
      const a = await harnessOn(database.url);
      servers.push(a);
      // Harness b as another process: its own database handle, shared by its two stores.
      const handle = await database.connect(2);
      const management = new PostgresManagementStore(handle);
      stores.push(management);
      const harness = new Harness({ store: await PostgresJobStore.open(handle), autoCreateEndpoints: false });
      const b = await createHarnessServer({ harness, port: 0, rateLimits: false, management: { store: management } });
      servers.push(b);
      const template = (await json<Template>('POST', `${a.url}/v1/templates`, { name: 'on-a', imageName: 'me/worker:1', isServerless: true, category: 'CPU' }))
        .body;
      const endpoint = (await json<Endpoint>('POST', `${a.url}/v1/endpoints`, { templateId: template.id })).body;
      const run = await call('POST', `${b.url}/v2/${endpoint.id}/run`, { body: { input: { n: 1 } } });
      expect(run.status).toBe(200);
      expect((await call('POST', `${b.url}/v2/not-an-endpoint/run`, { body: { input: {} } })).status).toBe(404);
      await servers.pop()?.close();
      await harness.close();
    } finally {
      for (const server of servers) await server.close();
      for (const store of stores) await store.close();
      await database.drop();
    }
  });

  it('shares the records between two harnesses on one database', async () => {
    const database = await createTestDatabase();
    const servers: HarnessServer[] = [];
    try {
      const a = await harnessOn(database.url);
      servers.push(a);
      const b = await harnessOn(database.url);
      servers.push(b);
      const template = (await json<Template>('POST', `${a.url}/v1/templates`, { name: 'shared', imageName: 'me/worker:1', isServerless: true })).body;
      const endpoint = (await json<Endpoint>('POST', `${b.url}/v1/endpoints`, { templateId: template.id, gpuTypeIds: ['NVIDIA RTX A6000'] })).body;
      expect((await json<Endpoint[]>('GET', `${a.url}/v1/endpoints`)).body.map((e) => e.id)).toEqual([endpoint.id]);
      // An update through one harness is a rolling release seen through the other.
      await json('POST', `${b.url}/v1/templates/${template.id}/update`, { imageName: 'me/worker:2' });
      expect((await json<Endpoint>('GET', `${a.url}/v1/endpoints/${endpoint.id}`)).body.version).toBe(2);
      // A job submitted through one harness is in the queue the other serves.
      const run = await json<{ id: string }>('POST', `${a.url}/v2/${endpoint.id}/run`, { input: { n: 1 } });
      const status = await json<{ status: string }>('GET', `${b.url}/v2/${endpoint.id}/status/${run.body.id}`);
      expect(status.body.status).toBe('IN_QUEUE');
      const taken = await json<{ error: { code: string } }>('POST', `${b.url}/v1/templates`, { name: 'shared', imageName: 'x', isServerless: true });
      expect(taken.body.error.code).toBe('SW_TEMPLATE_NAME_TAKEN');
      expect((await call('DELETE', `${a.url}/v1/endpoints/${endpoint.id}`)).status).toBe(204);
      expect((await call('GET', `${b.url}/v1/endpoints/${endpoint.id}`)).status).toBe(404);
    } finally {
      for (const server of servers) await server.close();
      await database.drop();
    }
  });
});
