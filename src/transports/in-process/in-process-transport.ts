/**
 * @module transports/in-process/in-process-transport
 * The worker meets the harness in the same process: takes from and posts to an
 * EndpointJobs directly. Used by the dry run and by `--serve-api`.
 */
import { randomUUID } from 'node:crypto';
import type { Job, JobResult, StreamChunk } from '../../job/index.js';
import type { EndpointJobs } from '../../harness/index.js';
import type { PostResultOptions, StopListener, TakeRequest, Transport } from '../transport.js';

export interface InProcessTransportOptions {
  /** The endpoint whose jobs this worker runs. */
  endpoint: EndpointJobs;
  /** Worker id; default `local-<random>`. */
  workerId?: string;
}

export class InProcessTransport implements Transport {
  readonly kind = 'in-process';
  readonly workerId: string;
  readonly #endpoint: EndpointJobs;
  readonly #unsubscribe: () => void;
  readonly #listeners = new Set<StopListener>();

  constructor(options: InProcessTransportOptions) {
    this.#endpoint = options.endpoint;
    this.workerId = options.workerId ?? `local-${randomUUID().slice(0, 8)}`;
    this.#endpoint.workers.touch(this.workerId, Date.now());
    this.#unsubscribe = this.#endpoint.stopRequested.add((workerId, jobId, reason) => {
      if (workerId !== this.workerId) return;
      for (const listener of this.#listeners) listener(jobId, reason);
    });
  }

  take(request: TakeRequest): Promise<Job[]> {
    return this.#endpoint.take(this.workerId, request.max, request.signal);
  }

  async postChunk(jobId: string, chunk: StreamChunk): Promise<void> {
    this.#endpoint.pushChunk(jobId, this.workerId, chunk);
  }

  async postProgress(jobId: string, output: unknown): Promise<void> {
    this.#endpoint.progress(jobId, this.workerId, output);
  }

  async postResult(jobId: string, result: JobResult, options: PostResultOptions): Promise<void> {
    void options;
    this.#endpoint.complete(jobId, this.workerId, result);
  }

  setJobsInProgress(jobIds: readonly string[]): void {
    void jobIds;
    this.#endpoint.workers.touch(this.workerId, Date.now());
  }

  onStop(listener: StopListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  async close(): Promise<void> {
    this.#unsubscribe();
    this.#listeners.clear();
    this.#endpoint.workers.remove(this.workerId);
  }
}
