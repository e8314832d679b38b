/**
 * @module harness/http/worker-api
 * The worker API (job-take, job-take-batch, job-done, job-stream, job-stop, ping)
 * under /v2/{endpoint_id}. Placeholder: being built.
 */
import type { FastifyInstance } from 'fastify';
import type { Harness } from '../../harness.js';

export interface WorkerApiOptions {
  /** The job store the routes work on. */
  harness: Harness;
}

/** Register the worker API routes; the server mounts this under the prefix /v2. */
export async function workerApiRoutes(app: FastifyInstance, options: WorkerApiOptions): Promise<void> {
  void app;
  void options;
}
