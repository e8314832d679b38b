/**
 * The in-memory store on its own: records are copies (a caller cannot change stored
 * state), release times come from the injected clock, and the plugin refuses bad
 * options at registration.
 */
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import {
  EndpointCreateInputSchema,
  InMemoryManagementStore,
  TemplateCreateInputSchema,
  managementApi,
} from '../../../packages/platform/src/harness/management/index.js';
import type { ManagementApiOptions } from '../../../packages/platform/src/harness/management/index.js';

describe('InMemoryManagementStore', () => {
  it('returns copies: changing a returned record changes nothing stored', () => {
    const store = new InMemoryManagementStore();
    const template = store.createTemplate(TemplateCreateInputSchema.parse({ name: 'n', imageName: 'i', isServerless: true }));
    template.env.INJECTED = 'x';
    template.ports.push('1/tcp');
    expect(store.getTemplate(template.id).env).toEqual({});
    expect(store.getTemplate(template.id).ports).toEqual(['8888/http', '22/tcp']);
  });

  it('stamps releases with the injected clock', () => {
    let now = Date.UTC(2030, 0, 1);
    const store = new InMemoryManagementStore({ now: () => now });
    const template = store.createTemplate(TemplateCreateInputSchema.parse({ name: 'n', imageName: 'i', isServerless: true, category: 'CPU' }));
    const endpoint = store.createEndpoint(
      EndpointCreateInputSchema.parse({ templateId: template.id, gpuTypeIds: [], workersMin: 0, workersMax: 1, idleTimeout: 5 }),
    );
    now += 60_000;
    store.updateTemplate(template.id, { imageName: 'j' });
    expect(store.getEndpoint(endpoint.id).releases.map((release) => release.createdAt)).toEqual(['2030-01-01T00:00:00.000Z', '2030-01-01T00:01:00.000Z']);
  });
});

describe('managementApi options', () => {
  it.each([
    ['no store', {}, 'option store'],
    ['an empty apiKey', { store: new InMemoryManagementStore(), apiKey: '' }, 'option apiKey'],
    ['hooks without onEndpointCreated', { store: new InMemoryManagementStore(), endpointHooks: {} }, 'option endpointHooks'],
  ])('refuses %s at registration', async (_case, options, message) => {
    const app = Fastify({ logger: false });
    await expect(app.register(managementApi, options as ManagementApiOptions).ready()).rejects.toThrow(message);
    await app.close();
  });
});
