/**
 * @module harness/management/store/in-memory-store
 * The management store of a single harness process: three Maps (insertion order is
 * creation order, which the list routes keep). Records are cloned on the way in and
 * out, so no caller can change stored state behind the store's back.
 */
import { ServerlessWorkerError } from '../../../job/index.js';
import type {
  Endpoint,
  EndpointCreate,
  EndpointRelease,
  EndpointUpdate,
  NetworkVolume,
  NetworkVolumeCreate,
  NetworkVolumeUpdate,
  Template,
  TemplateCreate,
  TemplateUpdate,
} from '../schemas/index.js';
import { checkEndpointFitsTemplate, computeTypeFor } from './endpoint-rules.js';
import { ID_LENGTH, newId } from './ids.js';
import type { ManagementStore } from './management-store.js';

export interface InMemoryManagementStoreOptions {
  /** The clock for release and creation times; default `Date.now`. */
  now?: () => number;
}

/** Keys of `after` whose value differs from `before` (JSON equality, fields are JSON). */
function changedKeys<T extends object>(before: T, after: T): string[] {
  const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
  return [...keys].filter(
    (key) => JSON.stringify((before as Record<string, unknown>)[key]) !== JSON.stringify((after as Record<string, unknown>)[key]),
  );
}

/** `patch` without the keys whose value is undefined, so spreading it keeps current values. */
function definedOnly<T extends object>(patch: T): Partial<T> {
  return Object.fromEntries(Object.entries(patch).filter(([, value]) => value !== undefined)) as Partial<T>;
}

/** GB of memory per vCPU by CPU flavor class: compute, general, memory optimised. */
const GB_PER_VCPU: Readonly<Record<string, number>> = { c: 2, g: 4, m: 8 };

/** A CPU endpoint's instance ids, `<flavor>-<vcpus>-<GB>` (like `cpu3c-2-4`); [] for GPU endpoints. */
function instanceIdsOf(endpoint: { computeType: string; cpuFlavorIds: readonly string[]; vcpuCount: number }): string[] {
  if (endpoint.computeType !== 'CPU') return [];
  return endpoint.cpuFlavorIds.flatMap((flavor) => {
    const perVcpu = GB_PER_VCPU[flavor.slice(-1)];
    return perVcpu === undefined ? [] : [`${flavor}-${endpoint.vcpuCount}-${endpoint.vcpuCount * perVcpu}`];
  });
}

export class InMemoryManagementStore implements ManagementStore {
  readonly #templates = new Map<string, Template>();
  readonly #volumes = new Map<string, NetworkVolume>();
  readonly #endpoints = new Map<string, Endpoint>();
  /** Templates created without isServerless: recorded false, yet allowed to back an endpoint. */
  readonly #serverlessUnset = new Set<string>();
  readonly #now: () => number;

  constructor(options: InMemoryManagementStoreOptions = {}) {
    this.#now = options.now ?? Date.now;
  }

  // ---- templates ----

  createTemplate(input: TemplateCreate): Template {
    this.#assertNameFree(input.name);
    const id = newId(ID_LENGTH.template, (candidate) => this.#templates.has(candidate));
    const template: Template = {
      id,
      ...structuredClone(definedOnly(input) as TemplateCreate),
      isServerless: input.isServerless ?? false,
      isPlatform: false,
      earned: 0,
      runtimeInMin: 0,
    };
    this.#templates.set(id, template);
    if (input.isServerless === undefined) this.#serverlessUnset.add(id);
    return structuredClone(template);
  }

  updateTemplate(id: string, patch: TemplateUpdate): Template {
    const before = this.#template(id);
    const { category: _category, isServerless: _isServerless, ...allowed } = patch;
    void _category;
    void _isServerless;
    if (allowed.name !== undefined && allowed.name !== before.name) this.#assertNameFree(allowed.name);
    const after: Template = { ...before, ...structuredClone(definedOnly(allowed)) };
    this.#templates.set(id, after);
    // The spec: an update triggers a rolling release for every endpoint using the template.
    const changedFields = changedKeys(before, after);
    for (const endpoint of this.#endpoints.values()) {
      if (endpoint.templateId === id) this.#release(endpoint, 'template-update', changedFields);
    }
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
    if (users.length > 0) {
      throw new ServerlessWorkerError(
        'SW_TEMPLATE_IN_USE',
        `Template "${id}" is used by endpoint${users.length > 1 ? 's' : ''} ${users.join(', ')}: delete them or point them at another template first`,
        { templateId: id, endpointIds: users },
      );
    }
    this.#templates.delete(id);
    this.#serverlessUnset.delete(id);
  }

  // ---- network volumes ----

  createNetworkVolume(input: NetworkVolumeCreate): NetworkVolume {
    const id = newId(ID_LENGTH.networkVolume, (candidate) => this.#volumes.has(candidate));
    const volume: NetworkVolume = { id, dataCenterId: input.dataCenterId, name: input.name, size: input.size };
    this.#volumes.set(id, volume);
    return { ...volume };
  }

  updateNetworkVolume(id: string, patch: NetworkVolumeUpdate): NetworkVolume {
    const before = this.#volume(id);
    if (patch.size !== undefined && patch.size <= before.size) {
      throw new ServerlessWorkerError(
        'SW_NETWORK_VOLUME_SIZE_NOT_GREATER',
        `Invalid network volume update: size must be greater than the current size of ${before.size} GB (volumes only grow; got ${patch.size})`,
        { field: 'size', currentSize: before.size, received: patch.size },
      );
    }
    const after: NetworkVolume = {
      ...before,
      ...(patch.name !== undefined ? { name: patch.name } : {}),
      ...(patch.size !== undefined ? { size: patch.size } : {}),
    };
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
    if (users.length > 0) {
      throw new ServerlessWorkerError(
        'SW_NETWORK_VOLUME_IN_USE',
        `Network volume "${id}" is mounted by endpoint${users.length > 1 ? 's' : ''} ${users.join(', ')}: delete them or detach the volume first`,
        { networkVolumeId: id, endpointIds: users },
      );
    }
    this.#volumes.delete(id);
  }

  // ---- endpoints ----

  createEndpoint(input: EndpointCreate): Endpoint {
    const template = this.#template(input.templateId, 'templateId');
    const { name, computeType, networkVolumeId, ...settings } = input;
    const shape = { ...settings, computeType: computeType ?? computeTypeFor(template) };
    checkEndpointFitsTemplate(shape, template, this.#serverlessUnset.has(template.id));
    if (networkVolumeId !== undefined) this.#volume(networkVolumeId, 'networkVolumeId');
    const id = newId(ID_LENGTH.endpoint, (candidate) => this.#endpoints.has(candidate));
    const createdAt = new Date(this.#now()).toISOString();
    const endpoint: Endpoint = {
      id,
      name: name ?? template.name,
      ...structuredClone(shape),
      ...(networkVolumeId !== undefined ? { networkVolumeId } : {}),
      instanceIds: instanceIdsOf(shape),
      workers: [],
      version: 1,
      releases: [{ version: 1, reason: 'created', templateId: input.templateId, changedFields: [], createdAt }],
      createdAt,
    };
    this.#endpoints.set(id, endpoint);
    return structuredClone(endpoint);
  }

  updateEndpoint(id: string, patch: EndpointUpdate): Endpoint {
    const before = this.#endpoint(id);
    const after: Endpoint = { ...structuredClone(before), ...structuredClone(definedOnly(patch)) };
    const template = this.#template(after.templateId, 'templateId');
    // A new template without a new computeType takes the template's.
    if (patch.computeType === undefined && after.templateId !== before.templateId) after.computeType = computeTypeFor(template);
    checkEndpointFitsTemplate(after, template, this.#serverlessUnset.has(template.id));
    if (patch.networkVolumeId !== undefined) this.#volume(patch.networkVolumeId, 'networkVolumeId');
    after.instanceIds = instanceIdsOf(after);
    if (after.templateId !== before.templateId) this.#release(after, 'template-change', ['templateId']);
    this.#endpoints.set(id, after);
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
  }

  // ---- internals ----

  /** Append a release to `endpoint` in place and bump its version. */
  #release(endpoint: Endpoint, reason: EndpointRelease['reason'], changedFields: string[]): void {
    const version = endpoint.version + 1;
    endpoint.version = version;
    endpoint.releases.push({
      version,
      reason,
      templateId: endpoint.templateId,
      changedFields: [...changedFields],
      createdAt: new Date(this.#now()).toISOString(),
    });
  }

  #assertNameFree(name: string): void {
    for (const template of this.#templates.values()) {
      if (template.name === name) {
        throw new ServerlessWorkerError(
          'SW_TEMPLATE_NAME_TAKEN',
          `Invalid template: name "${name}" is already used by template "${template.id}"; template names are unique`,
          { field: 'name', templateId: template.id },
        );
      }
    }
  }

  /** The stored template; `field` names the body field when the id came from a body. */
  #template(id: string, field?: string): Template {
    const template = this.#templates.get(id);
    if (template) return template;
    throw new ServerlessWorkerError(
      'SW_TEMPLATE_NOT_FOUND',
      field ? `${field} "${id}" names no template` : `No template with id "${id}"`,
      { templateId: id, ...(field ? { field } : {}) },
    );
  }

  #volume(id: string, field?: string): NetworkVolume {
    const volume = this.#volumes.get(id);
    if (volume) return volume;
    throw new ServerlessWorkerError(
      'SW_NETWORK_VOLUME_NOT_FOUND',
      field ? `${field} "${id}" names no network volume` : `No network volume with id "${id}"`,
      { networkVolumeId: id, ...(field ? { field } : {}) },
    );
  }

  #endpoint(id: string): Endpoint {
    const endpoint = this.#endpoints.get(id);
    if (endpoint) return endpoint;
    throw new ServerlessWorkerError('SW_ENDPOINT_NOT_FOUND', `No endpoint with id "${id}"`, { endpointId: id });
  }
}
