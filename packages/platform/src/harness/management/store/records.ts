/**
 * @module harness/management/store/records
 * The record rules every management store applies, as pure functions: a template, a
 * network volume or an endpoint built from its validated input, an update merged into
 * the stored record, a rolling release appended, and the not-found / in-use / name-taken
 * errors. The in-memory store and the PostgreSQL store differ only in where the records
 * live and how their state rules are made atomic.
 */
import { ServerlessWorkerError } from 'serverless-worker/internal';
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

/** Keys of `after` whose value differs from `before` (JSON equality, fields are JSON). */
export function changedKeys<T extends object>(before: T, after: T): string[] {
  const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
  return [...keys].filter((key) => JSON.stringify((before as Record<string, unknown>)[key]) !== JSON.stringify((after as Record<string, unknown>)[key]));
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

// ---------------------------------------------------------------- templates

/** A new template record; `serverlessUnset` tells the store to remember isServerless was not given. */
export function newTemplate(id: string, input: TemplateCreate): { template: Template; serverlessUnset: boolean } {
  const template: Template = {
    id,
    ...structuredClone(definedOnly(input) as TemplateCreate),
    isServerless: input.isServerless ?? false,
    isPlatform: false,
    earned: 0,
    runtimeInMin: 0,
  };
  return { template, serverlessUnset: input.isServerless === undefined };
}

/** The template after `patch` (category and isServerless never change), and the fields that changed. */
export function patchedTemplate(before: Template, patch: TemplateUpdate): { after: Template; changedFields: string[] } {
  const { category: _category, isServerless: _isServerless, ...allowed } = patch;
  void _category;
  void _isServerless;
  const after: Template = { ...structuredClone(before), ...structuredClone(definedOnly(allowed)) };
  return { after, changedFields: changedKeys(before, after) };
}

// ---------------------------------------------------------------- network volumes

export function newNetworkVolume(id: string, input: NetworkVolumeCreate): NetworkVolume {
  return { id, dataCenterId: input.dataCenterId, name: input.name, size: input.size };
}

/** The volume after `patch`; throws SW_NETWORK_VOLUME_SIZE_NOT_GREATER unless a new size grows it. */
export function patchedNetworkVolume(before: NetworkVolume, patch: NetworkVolumeUpdate): NetworkVolume {
  if (patch.size !== undefined && patch.size <= before.size) {
    throw new ServerlessWorkerError(
      'SW_NETWORK_VOLUME_SIZE_NOT_GREATER',
      `Invalid network volume update: size must be greater than the current size of ${before.size} GB (volumes only grow; got ${patch.size})`,
      { field: 'size', currentSize: before.size, received: patch.size },
    );
  }
  return {
    ...before,
    ...(patch.name !== undefined ? { name: patch.name } : {}),
    ...(patch.size !== undefined ? { size: patch.size } : {}),
  };
}

// ---------------------------------------------------------------- endpoints

/**
 * A new endpoint at version 1 on `template` (checked to fit: SW_INVALID_ENDPOINT). The
 * caller checks that `input.networkVolumeId` names a volume.
 */
export function newEndpoint(id: string, input: EndpointCreate, template: Template, serverlessUnset: boolean, at: number): Endpoint {
  const { name, computeType, networkVolumeId, ...settings } = input;
  const shape = { ...settings, computeType: computeType ?? computeTypeFor(template) };
  checkEndpointFitsTemplate(shape, template, serverlessUnset);
  const createdAt = new Date(at).toISOString();
  return {
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
}

/**
 * The endpoint after `patch`, checked against `template` (the template of the result:
 * `patch.templateId ?? before.templateId`); a new templateId records a rolling release.
 * The caller checks that a new `networkVolumeId` names a volume.
 */
export function patchedEndpoint(before: Endpoint, patch: EndpointUpdate, template: Template, serverlessUnset: boolean, at: number): Endpoint {
  let after: Endpoint = { ...structuredClone(before), ...structuredClone(definedOnly(patch)) };
  // computeType stays what it was when the endpoint moves to another template: the
  // template's category only files the template (spec 2.1), it does not retype endpoints.
  checkEndpointFitsTemplate(after, template, serverlessUnset);
  after.instanceIds = instanceIdsOf(after);
  if (after.templateId !== before.templateId) after = withRelease(after, 'template-change', ['templateId'], at);
  return after;
}

/** `endpoint` with one more release (version + 1). */
export function withRelease(endpoint: Endpoint, reason: EndpointRelease['reason'], changedFields: readonly string[], at: number): Endpoint {
  const version = endpoint.version + 1;
  return {
    ...endpoint,
    version,
    releases: [
      ...endpoint.releases,
      { version, reason, templateId: endpoint.templateId, changedFields: [...changedFields], createdAt: new Date(at).toISOString() },
    ],
  };
}

// ---------------------------------------------------------------- errors

export function templateNameTaken(name: string, templateId: string): ServerlessWorkerError {
  return new ServerlessWorkerError(
    'SW_TEMPLATE_NAME_TAKEN',
    `Invalid template: name "${name}" is already used by template "${templateId}"; template names are unique`,
    { field: 'name', templateId },
  );
}

/** `field` names the body field when the id came from a body. */
export function templateNotFound(id: string, field?: string): ServerlessWorkerError {
  return new ServerlessWorkerError('SW_TEMPLATE_NOT_FOUND', field ? `${field} "${id}" names no template` : `No template with id "${id}"`, {
    templateId: id,
    ...(field ? { field } : {}),
  });
}

export function networkVolumeNotFound(id: string, field?: string): ServerlessWorkerError {
  return new ServerlessWorkerError('SW_NETWORK_VOLUME_NOT_FOUND', field ? `${field} "${id}" names no network volume` : `No network volume with id "${id}"`, {
    networkVolumeId: id,
    ...(field ? { field } : {}),
  });
}

export function endpointNotFound(id: string): ServerlessWorkerError {
  return new ServerlessWorkerError('SW_ENDPOINT_NOT_FOUND', `No endpoint with id "${id}"`, { endpointId: id });
}

export function templateInUse(id: string, users: readonly string[]): ServerlessWorkerError {
  return new ServerlessWorkerError(
    'SW_TEMPLATE_IN_USE',
    `Template "${id}" is used by endpoint${users.length > 1 ? 's' : ''} ${users.join(', ')}: delete them or point them at another template first`,
    { templateId: id, endpointIds: [...users] },
  );
}

export function networkVolumeInUse(id: string, users: readonly string[]): ServerlessWorkerError {
  return new ServerlessWorkerError(
    'SW_NETWORK_VOLUME_IN_USE',
    `Network volume "${id}" is mounted by endpoint${users.length > 1 ? 's' : ''} ${users.join(', ')}: delete them or detach the volume first`,
    { networkVolumeId: id, endpointIds: [...users] },
  );
}
