/**
 * @module harness/management/store/management-store
 * The contract of the management store: templates, network volumes and endpoints.
 * Inputs arrive validated (defaults applied); the store enforces the rules that need
 * state (unique template names, volumes only grow, references exist, nothing in use
 * is deleted) and records rolling releases. Every method returns copies.
 *
 * Answers are `Awaitable`: the in-memory store (one process) answers at once, the
 * PostgreSQL store (shared by every harness on the database) with a promise; callers
 * through this interface always `await`.
 */
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

/** A value, or a promise of it. */
export type Awaitable<T> = T | Promise<T>;

export interface ManagementStore {
  /** `memory` (this process only) or `postgres` (shared by every harness on the database). */
  readonly kind: 'memory' | 'postgres';
  /** Create a template; throws SW_TEMPLATE_NAME_TAKEN when the name is used. */
  createTemplate(input: TemplateCreate): Awaitable<Template>;
  /**
   * Patch a template (absent fields keep their value) and record a rolling release on
   * every endpoint that uses it. Throws SW_TEMPLATE_NOT_FOUND, SW_TEMPLATE_NAME_TAKEN.
   */
  updateTemplate(id: string, patch: TemplateUpdate): Awaitable<Template>;
  /** Throws SW_TEMPLATE_NOT_FOUND. */
  getTemplate(id: string): Awaitable<Template>;
  /** In creation order. */
  listTemplates(): Awaitable<Template[]>;
  /** Throws SW_TEMPLATE_NOT_FOUND, or SW_TEMPLATE_IN_USE while endpoints use it. */
  deleteTemplate(id: string): Awaitable<void>;

  createNetworkVolume(input: NetworkVolumeCreate): Awaitable<NetworkVolume>;
  /** Throws SW_NETWORK_VOLUME_NOT_FOUND, or SW_NETWORK_VOLUME_SIZE_NOT_GREATER unless the size grows. */
  updateNetworkVolume(id: string, patch: NetworkVolumeUpdate): Awaitable<NetworkVolume>;
  /** Throws SW_NETWORK_VOLUME_NOT_FOUND. */
  getNetworkVolume(id: string): Awaitable<NetworkVolume>;
  listNetworkVolumes(): Awaitable<NetworkVolume[]>;
  /** Throws SW_NETWORK_VOLUME_NOT_FOUND, or SW_NETWORK_VOLUME_IN_USE while endpoints mount it. */
  deleteNetworkVolume(id: string): Awaitable<void>;

  /**
   * Create an endpoint at version 1. Throws SW_TEMPLATE_NOT_FOUND,
   * SW_NETWORK_VOLUME_NOT_FOUND, or SW_INVALID_ENDPOINT when it does not fit its
   * template (a Pod template; GPU types missing for a GPU template or given for CPU).
   */
  createEndpoint(input: EndpointCreate): Awaitable<Endpoint>;
  /** Patch an endpoint; a new templateId records a rolling release. Same errors as create, plus SW_ENDPOINT_NOT_FOUND. */
  updateEndpoint(id: string, patch: EndpointUpdate): Awaitable<Endpoint>;
  /** Throws SW_ENDPOINT_NOT_FOUND. */
  getEndpoint(id: string): Awaitable<Endpoint>;
  /** True when an endpoint with this id exists. */
  hasEndpoint(id: string): Awaitable<boolean>;
  listEndpoints(): Awaitable<Endpoint[]>;
  /** Throws SW_ENDPOINT_NOT_FOUND. */
  deleteEndpoint(id: string): Awaitable<void>;
  /**
   * Call `listener` after each change of a template or an endpoint; answers the unsubscribe.
   * Only a store no other process writes has it (the memory store): the launcher sleeps
   * until a change or a job gives it work, and polls a store without it (PostgreSQL).
   */
  onChange?(listener: () => void): () => void;
  /** Release what the store holds (connections); the records stay where they live. */
  close(): Promise<void>;
}
