/**
 * @module transports/in-process/in-process-transport
 * The worker meets the harness in the same process: takes from and posts to an
 * the harness's EndpointJobs directly (the same facade the HTTP worker API calls), seen
 * through InProcessJobSource so that transports do not import the harness. Used by the dry
 * run and by `--serve-api`.
 */
import { randomUUID } from 'node:crypto';
import { RawJson, type Job, type JobResult, type StreamChunk } from '../../job/index.js';
import { assertResultFits } from '../result-limits.js';
import type { PostResultOptions, ResultReceipt, StopListener, TakeRequest, Transport } from '../transport.js';
import type { InProcessJobSource } from './job-source.js';

export interface InProcessTransportOptions {
  /** The endpoint whose jobs this worker runs. */
  endpoint: InProcessJobSource;
  /** Worker id; default `local-<random>`. */
  workerId?: string;
  /**
   * Largest result, as the JSON a platform post would carry, bytes; default none (in
   * process nothing limits it). The local worker (dry run, --serve-api, runJob) sets the
   * platform's limit, so that a result the worker API would refuse fails here too.
   */
  maxResultBytes?: number;
}

export class InProcessTransport implements Transport {
  readonly kind = 'in-process';
  readonly workerId: string;
  readonly maxResultBytes: number | undefined;
  readonly #endpoint: InProcessJobSource;
  readonly #unsubscribe: () => void;
  readonly #listeners = new Set<StopListener>();

  constructor(options: InProcessTransportOptions) {
    this.#endpoint = options.endpoint;
    this.workerId = options.workerId ?? `local-${randomUUID().slice(0, 8)}`;
    this.maxResultBytes = options.maxResultBytes;
    void this.#endpoint.workers.touch(this.workerId).catch(() => {});
    this.#unsubscribe = this.#endpoint.stopRequested.add((workerId, jobId, reason, attempt) => {
      if (workerId !== this.workerId) return;
      for (const listener of this.#listeners) listener(jobId, reason, attempt);
    });
  }

  async take(request: TakeRequest): Promise<Job[]> {
    const jobs = await this.#endpoint.take(this.workerId, request.max, request.signal);
    // An input queued as its text (a large /run body, job/raw-json.ts) is parsed here, for the handler.
    return jobs.map((job) => (job.input instanceof RawJson ? { ...job, input: job.input.value() as Job['input'] } : job));
  }

  async postChunk(jobId: string, chunk: StreamChunk, attempt?: number): Promise<void> {
    const ack = await this.#endpoint.postChunk(jobId, this.workerId, chunk, attempt);
    if (!ack.applied && ack.reason === 'stale_attempt') await this.#endpoint.refuseStale(jobId, attempt, 'stream chunk');
  }

  /** Progress of a stale attempt is dropped. */
  async postProgress(jobId: string, output: unknown, attempt?: number): Promise<void> {
    await this.#endpoint.progress(jobId, this.workerId, output, attempt);
  }

  async postResult(jobId: string, result: JobResult, options: PostResultOptions): Promise<ResultReceipt> {
    if (this.maxResultBytes !== undefined) {
      const body = result.kind === 'output' ? { output: result.output } : { error: JSON.stringify(result.error) };
      assertResultFits(jobId, JSON.stringify(body), this.maxResultBytes, options.isStream);
    }
    const ack = await this.#endpoint.complete(jobId, this.workerId, result, options.attempt);
    if (!ack.applied && ack.reason === 'stale_attempt') await this.#endpoint.refuseStale(jobId, options.attempt, 'result');
    return ack.applied ? { applied: true } : { applied: false, reason: ack.reason };
  }

  setJobsInProgress(jobIds: readonly string[]): void {
    void this.#endpoint.workers.touch(this.workerId, { reportedJobIds: jobIds }).catch(() => {});
  }

  onStop(listener: StopListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  async close(): Promise<void> {
    this.#unsubscribe();
    this.#listeners.clear();
    await this.#endpoint.workers.remove(this.workerId);
  }
}
