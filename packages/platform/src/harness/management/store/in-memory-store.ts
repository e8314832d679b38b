/**
 * @module harness/management/store/in-memory-store
 * The management store of a single harness process: three Maps (insertion order is
 * creation order, which the list routes keep). Records are cloned on the way in and
 * out, so no caller can change stored state behind the store's back. The record rules
 * are records.ts's, shared with the PostgreSQL store; its methods answer synchronously.
 */
import { systemClock } from 'serverless-worker/internal';
import type {
  Endpoint,
  EndpointCreate,
  EndpointUpdate,
  NetworkVolume,
  NetworkVolumeCreate,
  NetworkVolumeUpdate,
  Template,
  TemplateCreate,
  TemplateUpdate,
} from '../schemas/index.js';
import { ID_LENGTH, newId } from './ids.js';
import type { ManagementStore } from './management-store.js';
import {
  endpointNotFound,
  networkVolumeInUse,
  networkVolumeNotFound,
  newEndpoint,
  newNetworkVolume,
  newTemplate,
  patchedEndpoint,
  patchedNetworkVolume,
  patchedTemplate,
  templateInUse,
  templateNameTaken,
  templateNotFound,
  withRelease,
} from './records.js';

export interface InMemoryManagementStoreOptions {
  /** The clock for release and creation times; default the system clock. */
  now?: () => number;
}

export class InMemoryManagementStore implements ManagementStore {
  readonly kind = 'memory';
  readonly #templates = new Map<string, Template>();
  readonly #volumes = new Map<string, NetworkVolume>();
  readonly #endpoints = new Map<string, Endpoint>();
  /** Templates created without isServerless: recorded false, yet allowed to back an endpoint. */
  readonly #serverlessUnset = new Set<string>();
  readonly #now: () => number;
  readonly #listeners = new Set<() => void>();

  constructor(options: InMemoryManagementStoreOptions = {}) {
    this.#now = options.now ?? (() => systemClock.now());
  }

  // ---- templates ----

  createTemplate(input: TemplateCreate): Template {
    this.#assertNameFree(input.name);
    const id = newId(ID_LENGTH.template, (candidate) => this.#templates.has(candidate));
    const { template, serverlessUnset } = newTemplate(id, input);
    this.#templates.set(id, template);
    if (serverlessUnset) this.#serverlessUnset.add(id);
    this.#changed();
    return structuredClone(template);
  }

  updateTemplate(id: string, patch: TemplateUpdate): Template {
    const before = this.#template(id);
    if (patch.name !== undefined && patch.name !== before.name) this.#assertNameFree(patch.name);
    const { after, changedFields } = patchedTemplate(before, patch);
    this.#templates.set(id, after);
    // The spec: an update triggers a rolling release for every endpoint using the template.
    const at = this.#now();
    for (const endpoint of this.#endpoints.values()) {
      if (endpoint.templateId === id) this.#endpoints.set(endpoint.id, withRelease(endpoint, 'template-update', changedFields, at));
    }
    this.#changed();
    return structuredClone(after);
  }

  getTemplate(id: string): Template {
    return structuredClone(this.#template(id));
  }

  listTemplates(): Template[] {
    return [...this.#templates.values()].map((template) => structuredClone(template));
  }

  deleteTemplate(id: string): void {
    this.#template(id);
    const users = [...this.#endpoints.values()].filter((endpoint) => endpoint.templateId === id).map((endpoint) => endpoint.id);
    if (users.length > 0) throw templateInUse(id, users);
    this.#templates.delete(id);
    this.#serverlessUnset.delete(id);
    this.#changed();
  }

  // ---- network volumes ----

  createNetworkVolume(input: NetworkVolumeCreate): NetworkVolume {
    const id = newId(ID_LENGTH.networkVolume, (candidate) => this.#volumes.has(candidate));
    const volume = newNetworkVolume(id, input);
    this.#volumes.set(id, volume);
    return { ...volume };
  }

  updateNetworkVolume(id: string, patch: NetworkVolumeUpdate): NetworkVolume {
    const after = patchedNetworkVolume(this.#volume(id), patch);
    this.#volumes.set(id, after);
    return { ...after };
  }

  getNetworkVolume(id: string): NetworkVolume {
    return { ...this.#volume(id) };
  }

  listNetworkVolumes(): NetworkVolume[] {
    return [...this.#volumes.values()].map((volume) => ({ ...volume }));
  }

  deleteNetworkVolume(id: string): void {
    this.#volume(id);
    const users = [...this.#endpoints.values()].filter((endpoint) => endpoint.networkVolumeId === id).map((endpoint) => endpoint.id);
    if (users.length > 0) throw networkVolumeInUse(id, users);
    this.#volumes.delete(id);
  }

  // ---- endpoints ----

  createEndpoint(input: EndpointCreate): Endpoint {
    const template = this.#template(input.templateId, 'templateId');
    const id = newId(ID_LENGTH.endpoint, (candidate) => this.#endpoints.has(candidate));
    const endpoint = newEndpoint(id, input, template, this.#serverlessUnset.has(template.id), this.#now());
    if (input.networkVolumeId !== undefined) this.#volume(input.networkVolumeId, 'networkVolumeId');
    this.#endpoints.set(id, endpoint);
    this.#changed();
    return structuredClone(endpoint);
  }

  updateEndpoint(id: string, patch: EndpointUpdate): Endpoint {
    const before = this.#endpoint(id);
    const template = this.#template(patch.templateId ?? before.templateId, 'templateId');
    const after = patchedEndpoint(before, patch, template, this.#serverlessUnset.has(template.id), this.#now());
    if (patch.networkVolumeId !== undefined) this.#volume(patch.networkVolumeId, 'networkVolumeId');
    this.#endpoints.set(id, after);
    this.#changed();
    return structuredClone(after);
  }

  getEndpoint(id: string): Endpoint {
    return structuredClone(this.#endpoint(id));
  }

  hasEndpoint(id: string): boolean {
    return this.#endpoints.has(id);
  }

  listEndpoints(): Endpoint[] {
    return [...this.#endpoints.values()].map((endpoint) => structuredClone(endpoint));
  }

  deleteEndpoint(id: string): void {
    this.#endpoint(id);
    this.#endpoints.delete(id);
    this.#changed();
  }

  /** Call `listener` after each change of a template or an endpoint (this store is this process's own: nobody else changes it). */
  onChange(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Nothing to close: the records go with the process. */
  async close(): Promise<void> {}

  // ---- internals ----

  #changed(): void {
    for (const listener of [...this.#listeners]) listener();
  }

  #assertNameFree(name: string): void {
    for (const template of this.#templates.values()) {
      if (template.name === name) throw templateNameTaken(name, template.id);
    }
  }

  /** The stored template; `field` names the body field when the id came from a body. */
  #template(id: string, field?: string): Template {
    const template = this.#templates.get(id);
    if (template) return template;
    throw templateNotFound(id, field);
  }

  #volume(id: string, field?: string): NetworkVolume {
    const volume = this.#volumes.get(id);
    if (volume) return volume;
    throw networkVolumeNotFound(id, field);
  }

  #endpoint(id: string): Endpoint {
    const endpoint = this.#endpoints.get(id);
    if (endpoint) return endpoint;
    throw endpointNotFound(id);
  }
}
