/**
 * @module harness/worker-api/direct-calls
 * The worker API's job-take, job-done and job-stream as calls, for a worker joined to
 * this harness process by another channel than HTTP (the supervised child of
 * `--serve-api`, over its IPC channel: local/child-channel.ts). The routes plugin fills
 * it with the same functions its HTTP handlers run (liveness, attempts, stale posts,
 * events, the body checks), so both channels behave alike; the heartbeat is the
 * supervisor's (local/child-watch.ts), through the ping's own call, and so is its job-stop
 * wait (local/child-channel.ts sends the stops over the channel).
 */
import type { Logger } from 'pino';
import type { Job } from 'serverless-worker/internal';
import type { StopBatch } from './pending-stops.js';

/** Where a call logs: a request's logger over HTTP, the supervisor's for the IPC channel. */
export type WorkerApiLog = Pick<Logger, 'debug' | 'info'>;

/** What a job-done or job-stream call answered: the JSON body an HTTP worker gets. */
export type DirectAnswer = Readonly<Record<string, unknown>>;

export interface WorkerApiCalls {
  /**
   * job-take(-batch): up to `max` jobs, waiting until one is queued, or until `controller`
   * is aborted ([] then): by the caller, or by the call itself when the worker is declared
   * gone or the server closes. A controller of this take alone.
   */
  take(endpointId: string, workerId: string, max: number, controller: AbortController): Promise<Job[]>;
  /** job-done with its body as text (`{output}`, `{error}`, or `{status: "IN_PROGRESS", output}`); throws as the route answers an error. */
  done(endpointId: string, workerId: string, jobId: string, body: string, attempt: number | undefined, log: WorkerApiLog): Promise<DirectAnswer>;
  /** job-stream with its body as text (`{output, metrics?}`); throws as the route answers an error. */
  stream(endpointId: string, workerId: string, jobId: string, body: string, attempt: number | undefined, log: WorkerApiLog): Promise<DirectAnswer>;
  /** The heartbeat (ping) listing `jobIds`, the jobs the worker holds: its supervisor's, for a child that runs no heartbeat of its own (local/child-watch.ts). */
  ping(endpointId: string, workerId: string, jobIds: readonly string[], log: Logger): Promise<void>;
  /** job-stop: the stops queued for the worker, waiting until there are some; undefined once `signal` aborts (or the server closes). */
  stops(endpointId: string, workerId: string, signal: AbortSignal): Promise<StopBatch | undefined>;
}

/** Filled by the worker API routes once registered (WorkerApiOptions.direct); read by the channel of a supervised child. */
export class WorkerApiDirect {
  #calls: WorkerApiCalls | undefined;

  /** Called by the routes plugin. */
  bind(calls: WorkerApiCalls): void {
    this.#calls = calls;
  }

  /** The calls; throws when the worker API was never registered with this object. */
  get calls(): WorkerApiCalls {
    if (this.#calls === undefined) throw new Error('the worker API was not registered with this WorkerApiDirect (pass it as workerApi.direct)');
    return this.#calls;
  }
}
