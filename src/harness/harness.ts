/**
 * @module harness/harness
 * The local platform's job side: one EndpointJobs per endpoint. HTTP layers (queue
 * API, worker API, management API) and the in-process transport all work on this.
 */
import { ServerlessWorkerError } from '../job/index.js';
import { systemClock, type Clock } from './clock.js';
import { EndpointJobs } from './endpoint-jobs.js';
import type { LaunchedWorkersView } from './launched-workers-view.js';

export interface HarnessOptions {
  /** Time source; default the system clock. Tests pass a ManualClock. */
  clock?: Clock;
  /**
   * Create an endpoint the first time its id is used; default true, so that any
   * endpoint id works locally. When false, only ids made by `createEndpoint` (or the
   * management API) exist, and others answer SW_ENDPOINT_NOT_FOUND.
   */
  autoCreateEndpoints?: boolean;
  /** Endpoints to create at start; default none. */
  endpoints?: readonly string[];
  /** Called with errors thrown by listeners; default ignore. */
  onListenerError?: (error: unknown) => void;
}

export class Harness {
  readonly clock: Clock;
  readonly autoCreateEndpoints: boolean;
  readonly #endpoints = new Map<string, EndpointJobs>();
  readonly #onCreated = new Set<(endpoint: EndpointJobs) => void>();
  readonly #onListenerError: (error: unknown) => void;
  /** Workers the harness runs itself (set by a Launcher); /health, /logs and /v1 pods read it. Default none. */
  launchedWorkers: LaunchedWorkersView | undefined;

  constructor(options: HarnessOptions = {}) {
    this.clock = options.clock ?? systemClock;
    this.autoCreateEndpoints = options.autoCreateEndpoints ?? true;
    this.#onListenerError = options.onListenerError ?? (() => {});
    for (const id of options.endpoints ?? []) this.createEndpoint(id);
  }

  /** Create (or return) the endpoint `id`. */
  createEndpoint(id: string): EndpointJobs {
    let endpoint = this.#endpoints.get(id);
    if (!endpoint) {
      endpoint = new EndpointJobs(id, { clock: this.clock, onListenerError: this.#onListenerError });
      this.#endpoints.set(id, endpoint);
      for (const listener of this.#onCreated) listener(endpoint);
    }
    return endpoint;
  }

  /** Remove the endpoint `id` and its jobs; answers whether it existed. */
  deleteEndpoint(id: string): boolean {
    const endpoint = this.#endpoints.get(id);
    endpoint?.close();
    return this.#endpoints.delete(id);
  }

  /** The endpoint `id`; created on first use when autoCreateEndpoints, else SW_ENDPOINT_NOT_FOUND. */
  endpoint(id: string): EndpointJobs {
    const endpoint = this.#endpoints.get(id);
    if (endpoint) return endpoint;
    if (this.autoCreateEndpoints) return this.createEndpoint(id);
    throw new ServerlessWorkerError('SW_ENDPOINT_NOT_FOUND', `Endpoint ${id} does not exist in this harness`, {
      endpointId: id,
      known: [...this.#endpoints.keys()],
    });
  }

  /** The endpoint `id` if it exists; never creates. */
  findEndpoint(id: string): EndpointJobs | undefined {
    return this.#endpoints.get(id);
  }

  endpoints(): IterableIterator<EndpointJobs> {
    return this.#endpoints.values();
  }

  /** Call `listener` for every endpoint created from now on (and each existing one). */
  onEndpoint(listener: (endpoint: EndpointJobs) => void): () => void {
    this.#onCreated.add(listener);
    for (const endpoint of this.#endpoints.values()) listener(endpoint);
    return () => this.#onCreated.delete(listener);
  }

  /** Cancel every timer. */
  close(): void {
    for (const endpoint of this.#endpoints.values()) endpoint.close();
  }
}
