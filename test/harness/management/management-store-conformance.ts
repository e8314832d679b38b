/**
 * The management store conformance suite: every ManagementStore (the in-memory one and
 * the PostgreSQL one) passes it. `describeManagementStore(name, open)` registers the
 * tests; `open` answers a fresh, empty store and, for a store shared by several harness
 * processes (`shared` true), `openPeer` (another store on the same data), under which the
 * suite also checks that records and the name rule hold across instances.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  EndpointCreateInputSchema,
  NetworkVolumeCreateInputSchema,
  TemplateCreateInputSchema,
  type EndpointCreateInput,
  type ManagementStore,
  type TemplateCreateInput,
} from '../../../packages/platform/src/harness/management/index.js';

export interface OpenedManagementStore {
  readonly store: ManagementStore;
  /** Another store on the same data (another harness process); absent for a store of one process. */
  readonly openPeer?: () => Promise<ManagementStore>;
  /** Close what `open` opened (peers included) and drop the data. */
  close(): Promise<void>;
}

const template = (input: Partial<TemplateCreateInput> = {}) =>
  TemplateCreateInputSchema.parse({ name: 'worker', imageName: 'ghcr.io/me/worker:1', isServerless: true, ...input });
const endpoint = (templateId: string, input: Partial<EndpointCreateInput> = {}) =>
  EndpointCreateInputSchema.parse({ templateId, gpuTypeIds: ['NVIDIA GeForce RTX 4090'], ...input });

/** The error a store call threw (sync or async), for its code and details. */
async function failure(call: () => unknown): Promise<{ code?: string; message: string; details?: Record<string, unknown> }> {
  try {
    await call();
  } catch (error) {
    return error as { code?: string; message: string; details?: Record<string, unknown> };
  }
  throw new Error('expected the call to fail');
}

export function describeManagementStore(name: string, open: () => Promise<OpenedManagementStore>, shared = false): void {
  describe(`ManagementStore conformance: ${name}`, () => {
    let opened: OpenedManagementStore | undefined;
    afterEach(async () => {
      await opened?.close();
      opened = undefined;
    });
    const fresh = async (): Promise<OpenedManagementStore> => {
      opened = await open();
      return opened;
    };

    it('templates: create, get, list in creation order, update, delete', async () => {
      const { store } = await fresh();
      const a = await store.createTemplate(template({ name: 'a', env: { MODEL: 'x' }, ports: ['8000/http', '22/ssh'] }));
      const b = await store.createTemplate(template({ name: 'b', category: 'CPU' }));
      expect(a).toMatchObject({ name: 'a', env: { MODEL: 'x' }, ports: ['8000/http', '22/ssh'], isServerless: true, isPlatform: false });
      expect(a.id).toMatch(/^[a-z0-9]{10}$/);
      expect(await store.getTemplate(a.id)).toEqual(a);
      expect((await store.listTemplates()).map((t) => t.name)).toEqual(['a', 'b']);
      const updated = await store.updateTemplate(a.id, { imageName: 'ghcr.io/me/worker:2', env: { MODEL: 'y' } });
      expect(updated).toEqual({ ...a, imageName: 'ghcr.io/me/worker:2', env: { MODEL: 'y' } });
      expect(await store.getTemplate(a.id)).toEqual(updated);
      await store.deleteTemplate(b.id);
      expect((await store.listTemplates()).map((t) => t.id)).toEqual([a.id]);
      expect(await failure(() => store.getTemplate(b.id))).toMatchObject({ code: 'SW_TEMPLATE_NOT_FOUND' });
      expect(await failure(() => store.deleteTemplate(b.id))).toMatchObject({ code: 'SW_TEMPLATE_NOT_FOUND' });
    });

    it('templates: names are unique on create and on update, naming the template that has the name', async () => {
      const { store } = await fresh();
      const a = await store.createTemplate(template({ name: 'taken' }));
      const b = await store.createTemplate(template({ name: 'other' }));
      expect(await failure(() => store.createTemplate(template({ name: 'taken' })))).toMatchObject({
        code: 'SW_TEMPLATE_NAME_TAKEN',
        details: { field: 'name', templateId: a.id },
      });
      expect(await failure(() => store.updateTemplate(b.id, { name: 'taken' }))).toMatchObject({
        code: 'SW_TEMPLATE_NAME_TAKEN',
        details: { templateId: a.id },
      });
      // Keeping its own name is no conflict; a freed name can be taken again.
      expect((await store.updateTemplate(a.id, { name: 'taken' })).name).toBe('taken');
      await store.updateTemplate(a.id, { name: 'renamed' });
      expect((await store.updateTemplate(b.id, { name: 'taken' })).name).toBe('taken');
      expect((await store.listTemplates()).map((t) => t.name).sort()).toEqual(['renamed', 'taken']);
    });

    it('network volumes: create, get, list, grow only, delete unless mounted', async () => {
      const { store } = await fresh();
      const volume = await store.createNetworkVolume(NetworkVolumeCreateInputSchema.parse({ name: 'models', size: 100, dataCenterId: 'EU-RO-1' }));
      expect(volume).toEqual({ id: expect.stringMatching(/^[a-z0-9]{10}$/), name: 'models', size: 100, dataCenterId: 'EU-RO-1' });
      expect(await store.listNetworkVolumes()).toEqual([volume]);
      expect(await failure(() => store.updateNetworkVolume(volume.id, { size: 100 }))).toMatchObject({ code: 'SW_NETWORK_VOLUME_SIZE_NOT_GREATER' });
      expect(await store.updateNetworkVolume(volume.id, { size: 150, name: 'weights' })).toEqual({ ...volume, size: 150, name: 'weights' });
      const t = await store.createTemplate(template());
      const e = await store.createEndpoint(endpoint(t.id, { networkVolumeId: volume.id }));
      expect(await failure(() => store.deleteNetworkVolume(volume.id))).toMatchObject({ code: 'SW_NETWORK_VOLUME_IN_USE', details: { endpointIds: [e.id] } });
      expect(await failure(() => store.createEndpoint(endpoint(t.id, { networkVolumeId: 'nope' })))).toMatchObject({
        code: 'SW_NETWORK_VOLUME_NOT_FOUND',
        details: { field: 'networkVolumeId' },
      });
      await store.deleteEndpoint(e.id);
      await store.deleteNetworkVolume(volume.id);
      expect(await store.listNetworkVolumes()).toEqual([]);
      expect(await failure(() => store.getNetworkVolume(volume.id))).toMatchObject({ code: 'SW_NETWORK_VOLUME_NOT_FOUND' });
    });

    it('endpoints: create at version 1, get, list, update, delete; the template stays while in use', async () => {
      const { store } = await fresh();
      const t = await store.createTemplate(template());
      const e = await store.createEndpoint(endpoint(t.id, { name: 'llm', workersMax: 5, scalerType: 'REQUEST_COUNT', scalerValue: 2 }));
      expect(e).toMatchObject({ name: 'llm', templateId: t.id, computeType: 'GPU', workersMin: 0, workersMax: 5, version: 1, workers: [], instanceIds: [] });
      expect(e.id).toMatch(/^[a-z0-9]{14}$/);
      expect(e.releases).toEqual([{ version: 1, reason: 'created', templateId: t.id, changedFields: [], createdAt: e.createdAt }]);
      expect(await store.getEndpoint(e.id)).toEqual(e);
      expect(await store.hasEndpoint(e.id)).toBe(true);
      expect(await store.hasEndpoint('nope')).toBe(false);
      const updated = await store.updateEndpoint(e.id, { workersMax: 2, idleTimeout: 30 });
      expect(updated).toEqual({ ...e, workersMax: 2, idleTimeout: 30 });
      expect(await failure(() => store.updateEndpoint(e.id, { workersMin: 3 }))).toMatchObject({
        code: 'SW_INVALID_ENDPOINT',
        details: { field: 'workersMin' },
      });
      expect(await failure(() => store.deleteTemplate(t.id))).toMatchObject({ code: 'SW_TEMPLATE_IN_USE', details: { endpointIds: [e.id] } });
      expect((await store.listEndpoints()).map((x) => x.id)).toEqual([e.id]);
      await store.deleteEndpoint(e.id);
      expect(await store.listEndpoints()).toEqual([]);
      expect(await failure(() => store.getEndpoint(e.id))).toMatchObject({ code: 'SW_ENDPOINT_NOT_FOUND' });
      expect(await failure(() => store.deleteEndpoint(e.id))).toMatchObject({ code: 'SW_ENDPOINT_NOT_FOUND' });
      await store.deleteTemplate(t.id);
    });

    it('endpoints: template rules (unknown template, Pod template, template created without isServerless)', async () => {
      const { store } = await fresh();
      expect(await failure(() => store.createEndpoint(endpoint('nope')))).toMatchObject({ code: 'SW_TEMPLATE_NOT_FOUND', details: { field: 'templateId' } });
      const pod = await store.createTemplate(template({ name: 'pod', isServerless: false }));
      expect(await failure(() => store.createEndpoint(endpoint(pod.id)))).toMatchObject({ code: 'SW_INVALID_ENDPOINT', details: { field: 'templateId' } });
      const { isServerless: _unset, ...withoutFlag } = template({ name: 'unset' });
      void _unset;
      const unset = await store.createTemplate(withoutFlag);
      expect(unset.isServerless).toBe(false);
      expect((await store.createEndpoint(endpoint(unset.id))).templateId).toBe(unset.id);
      const cpu = await store.createTemplate(template({ name: 'cpu', category: 'CPU' }));
      expect(await failure(() => store.createEndpoint(endpoint(cpu.id)))).toMatchObject({ code: 'SW_INVALID_ENDPOINT', details: { field: 'gpuTypeIds' } });
      expect(await store.createEndpoint(endpoint(cpu.id, { gpuTypeIds: [], cpuFlavorIds: ['cpu3c'], vcpuCount: 2 }))).toMatchObject({
        computeType: 'CPU',
        instanceIds: ['cpu3c-2-4'],
      });
    });

    it('rolling releases: a template update releases every endpoint on it, a template change releases the endpoint', async () => {
      const { store } = await fresh();
      const t1 = await store.createTemplate(template({ name: 't1' }));
      const t2 = await store.createTemplate(template({ name: 't2' }));
      const e = await store.createEndpoint(endpoint(t1.id));
      await store.updateTemplate(t1.id, { imageName: 'ghcr.io/me/worker:2', env: { A: '1' } });
      const afterUpdate = await store.getEndpoint(e.id);
      expect(afterUpdate.version).toBe(2);
      expect(afterUpdate.releases[1]).toMatchObject({ version: 2, reason: 'template-update', templateId: t1.id });
      expect([...(afterUpdate.releases[1]?.changedFields ?? [])].sort()).toEqual(['env', 'imageName']);
      const changed = await store.updateEndpoint(e.id, { templateId: t2.id });
      expect(changed).toMatchObject({ version: 3, templateId: t2.id });
      expect(changed.releases.map((r) => r.reason)).toEqual(['created', 'template-update', 'template-change']);
      expect(await store.getEndpoint(e.id)).toEqual(changed);
      // t1 is free again, t2 is in use.
      await store.deleteTemplate(t1.id);
      expect(await failure(() => store.deleteTemplate(t2.id))).toMatchObject({ code: 'SW_TEMPLATE_IN_USE' });
    });

    it('returns copies: changing a returned record changes nothing stored', async () => {
      const { store } = await fresh();
      const t = await store.createTemplate(template());
      t.env.INJECTED = 'x';
      const e = await store.createEndpoint(endpoint(t.id));
      e.gpuTypeIds.push('other');
      expect((await store.getTemplate(t.id)).env).toEqual({});
      expect((await store.getEndpoint(e.id)).gpuTypeIds).toEqual(['NVIDIA GeForce RTX 4090']);
    });

    // Only a shared store has peers (another harness process on the same data).
    if (!shared) return;
    it('shared store: a peer reads and changes the same records, and one name is taken once when two create it at once', async () => {
      const { store, openPeer } = await fresh();
      if (!openPeer) throw new Error('a shared store must give openPeer');
      const peer = await openPeer();
      const t = await store.createTemplate(template({ name: 'shared' }));
      const e = await peer.createEndpoint(endpoint(t.id));
      expect(await store.getEndpoint(e.id)).toEqual(e);
      await store.updateTemplate(t.id, { imageName: 'ghcr.io/me/worker:3' });
      expect((await peer.getEndpoint(e.id)).version).toBe(2);
      const results = await Promise.allSettled([store.createTemplate(template({ name: 'race' })), peer.createTemplate(template({ name: 'race' }))]);
      expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
      const refused = results.find((result) => result.status === 'rejected');
      expect(refused?.status === 'rejected' ? (refused.reason as { code?: string }).code : undefined).toBe('SW_TEMPLATE_NAME_TAKEN');
      expect((await peer.listTemplates()).filter((x) => x.name === 'race')).toHaveLength(1);
    });
  });
}
