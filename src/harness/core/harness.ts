/**
 * @module harness/core/harness
 * The local platform's job side: one job store (in memory by default), the scheduler
 * that applies its time rules on the harness's clock, and one EndpointJobs facade per
 * endpoint. HTTP layers (queue API, worker API, management API) and the in-process
 * transport all work on this.
 */
import { ServerlessWorkerError } from '../../job/index.js';
import { DEFAULT_MAX_REQUEUES } from '../store/attempts.js';
import { sleep, systemClock, type Clock } from '../../clock/index.js';
import { EndpointJobs } from './endpoint-jobs.js';
import { Scheduler } from './scheduler.js';
import type { ChangeOutcome, DueOutcome, JobStore, StoreEvent } from '../store/job-store.js';
import { MemoryJobStore } from '../store/memory-job-store.js';
import { checkQueueRoom } from './queue-room.js';

/** Default cap on queued request bytes per harness (HarnessOptions.maxQueuedBytes): 128 MiB. */
export const DEFAULT_MAX_QUEUED_BYTES = 128 * 1024 * 1024;

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
  /**
   * Times a job lost by its worker (the worker died or went silent, or the take
   * answer never reached it) goes back to the queue before it ends FAILED with
   * SW_REQUEUE_LIMIT; default 3. /retry starts the count again.
   */
  maxRequeues?: number;
  /**
   * Most bytes of request bodies (as received) that jobs waiting in the queue may hold in
   * this process's memory, every endpoint together; a submission past it is refused
   * with 503 SW_QUEUE_FULL and Retry-After. Default DEFAULT_MAX_QUEUED_BYTES (128 MiB,
   * sized so that Node's default heap holds them: bench/README.md). Applies to the
   * in-memory store only: a PostgreSQL store keeps its queue in the database.
   */
  maxQueuedBytes?: number;
  /**
   * Where jobs live; default a new in-memory store (MemoryJobStore). The harness
   * closes it in close().
   */
  store?: JobStore;
}

/** How a drain ended: jobs still running when its deadline passed, and jobs left in the queue. */
export interface DrainResult {
  readonly running: number;
  readonly queued: number;
}

export class Harness {
  readonly clock: Clock;
  readonly store: JobStore;
  /** The time rules (ttl, execution timeouts, retention) and periodic tasks, on `clock`. */
  readonly scheduler: Scheduler;
  readonly autoCreateEndpoints: boolean;
  readonly #unsubscribe: () => void;
  readonly #endpoints = new Map<string, EndpointJobs>();
  readonly #onCreated = new Set<(endpoint: EndpointJobs) => void>();
  readonly #createdOnUse = new Map<string, number>();
  readonly #onCreatedOnUse = new Set<(endpointId: string) => void>();
  readonly #onListenerError: (error: unknown) => void;
  readonly #maxRequeues: number | undefined;
  readonly #maxQueuedBytes: number;
  /** drain() began: endpoints made from now on hand out no job either. */
  #draining = false;

  constructor(options: HarnessOptions = {}) {
    this.clock = options.clock ?? systemClock;
    this.autoCreateEndpoints = options.autoCreateEndpoints ?? true;
    this.#onListenerError = options.onListenerError ?? (() => {});
    this.#maxRequeues = options.maxRequeues;
    this.#maxQueuedBytes = options.maxQueuedBytes ?? DEFAULT_MAX_QUEUED_BYTES;
    this.store = options.store ?? new MemoryJobStore();
    this.#unsubscribe = this.store.subscribe((event) => this.#route(event));
    this.scheduler = new Scheduler(this.store, this.clock, { onDue: (outcome) => this.#onDue(outcome), onError: this.#onListenerError });
    for (const id of options.endpoints ?? []) this.createEndpoint(id);
  }

  /** Times a lost job goes back to the queue before it ends FAILED (the maxRequeues option, default 3). */
  get maxRequeues(): number {
    return this.#maxRequeues ?? DEFAULT_MAX_REQUEUES;
  }

  /**
   * Throws SW_QUEUE_FULL when a request of `bytes` would not fit under maxQueuedBytes now
   * (the HTTP server asks with a body's Content-Length before reading the body);
   * `inFlightBytes`: bodies let in that way and still arriving, counted as if queued.
   */
  checkQueueRoom(bytes: number, inFlightBytes = 0): void {
    checkQueueRoom(this.store, this.#maxQueuedBytes, bytes, inFlightBytes);
  }

  /** Create (or return) the endpoint `id`. */
  createEndpoint(id: string): EndpointJobs {
    const known = this.#endpoints.get(id);
    if (known) return known;
    this.store.createEndpoint(id).catch(this.#onListenerError);
    return this.#facade(id);
  }

  /** Remove the endpoint `id` and its jobs; answers whether it existed. */
  deleteEndpoint(id: string): boolean {
    this.store.deleteEndpoint(id).catch(this.#onListenerError);
    return this.#endpoints.delete(id);
  }

  /** The endpoint `id`; created on first use when autoCreateEndpoints, else SW_ENDPOINT_NOT_FOUND. */
  endpoint(id: string): EndpointJobs {
    const endpoint = this.#endpoints.get(id);
    if (endpoint) return endpoint;
    if (this.autoCreateEndpoints) {
      const created = this.createEndpoint(id);
      if (!this.#createdOnUse.has(id)) {
        this.#createdOnUse.set(id, this.clock.now());
        for (const listener of this.#onCreatedOnUse) listener(id);
      }
      return created;
    }
    throw new ServerlessWorkerError('SW_ENDPOINT_NOT_FOUND', `Endpoint ${id} does not exist in this harness`, {
      endpointId: id,
      known: [...this.#endpoints.keys()],
    });
  }

  /**
   * The endpoint `id` for a request that reads, or acts on jobs it must already hold
   * (GET /health, /status, /stream, /requests, /cancel, /purge-queue): this process's
   * facade, or one made for an endpoint the store knows (created through another harness
   * on a shared store); undefined when there is none. Never creates an endpoint: a GET
   * on a misspelt id adds nothing. Without autoCreateEndpoints an id the store does not
   * know throws SW_ENDPOINT_NOT_FOUND, as endpoint() does.
   */
  async existingEndpoint(id: string): Promise<EndpointJobs | undefined> {
    const known = this.#endpoints.get(id);
    if (known) return known;
    if ((await this.store.endpointSettings(id)) !== undefined) return this.#facade(id);
    if (!this.autoCreateEndpoints) return this.endpoint(id);
    return undefined;
  }

  /** Endpoints made on first use (autoCreateEndpoints), with when: an id there by mistake (a typo in a client) shows on the dashboard. */
  get createdOnUse(): ReadonlyMap<string, number> {
    return this.#createdOnUse;
  }

  /** Call `listener` once for each endpoint made on first use from now on (the server logs a warning); answers the unsubscribe. */
  onCreatedOnUse(listener: (endpointId: string) => void): () => void {
    this.#onCreatedOnUse.add(listener);
    return () => this.#onCreatedOnUse.delete(listener);
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

  /**
   * Report jobs that a call of this process ended (an applyDue of its scheduler, a sweep
   * of silent workers, a requeue past the limit) to their endpoint's jobEnded listeners
   * (webhooks, metrics). The endpoint's facade is made when this process has none yet:
   * after a restart, or on a harness that never served the endpoint, deadlines that
   * passed are applied before any request made it, and the job's end must still be
   * reported, once (the store hands each end to one call only).
   */
  reportEnded(outcome: Pick<ChangeOutcome, 'ended'>): void {
    for (const job of outcome.ended) this.#facade(job.endpointId).reportEnded({ ended: [job] });
  }

  /**
   * Shutting down: stop handing out jobs on every endpoint (waiting takes answer at
   * once), then wait until no job held by a worker that took it through this process is
   * IN_PROGRESS, or `deadlineMs` (real time) passes. Jobs running on workers connected to
   * other harness processes on a shared store are theirs to wait for. Running jobs'
   * results, chunks and the /runsync calls waiting for them are still answered meanwhile.
   * Answers what is left: those running jobs, and the endpoints' queued jobs (what the
   * in-memory store loses; a shared store keeps them for the others).
   */
  async drain(deadlineMs: number): Promise<DrainResult> {
    this.#draining = true;
    for (const endpoint of this.#endpoints.values()) endpoint.stopTaking();
    // Real time (systemClock), not the harness's clock: a shutdown must end though a test's ManualClock stands still.
    const deadline = systemClock.now() + deadlineMs;
    let left = await this.#left();
    while (left.running > 0 && systemClock.now() < deadline) {
      await sleep(Math.min(100, Math.max(1, deadline - systemClock.now())));
      left = await this.#left();
    }
    return left;
  }

  async #left(): Promise<DrainResult> {
    let running = 0;
    let queued = 0;
    for (const endpoint of this.#endpoints.values()) {
      running += await endpoint.heldHere();
      queued += (await endpoint.counts()).inQueue;
    }
    return { running, queued };
  }

  /** Cancel every timer and close the store. */
  async close(): Promise<void> {
    this.scheduler.close();
    this.#unsubscribe();
    await this.store.close();
  }

  /** A store event goes to the endpoint's facade, when this process has one. */
  #route(event: StoreEvent): void {
    this.#endpoints.get(event.endpointId)?.onStoreEvent(event);
  }

  /** Jobs the scheduler's applyDue ended: their endpoints fire jobEnded (webhooks, metrics). */
  #onDue(outcome: DueOutcome): void {
    this.reportEnded(outcome);
  }

  /** The facade of endpoint `id`, made (and announced to onEndpoint listeners) when missing; the store is not asked. */
  #facade(id: string): EndpointJobs {
    let endpoint = this.#endpoints.get(id);
    if (!endpoint) {
      endpoint = new EndpointJobs(id, {
        clock: this.clock,
        store: this.store,
        onListenerError: this.#onListenerError,
        ...(this.#maxRequeues !== undefined ? { maxRequeues: this.#maxRequeues } : {}),
        maxQueuedBytes: this.#maxQueuedBytes,
      });
      this.#endpoints.set(id, endpoint);
      if (this.#draining) endpoint.stopTaking();
      for (const listener of this.#onCreated) listener(endpoint);
    }
    return endpoint;
  }
}
