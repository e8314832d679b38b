/**
 * @module local/local-worker
 * A harness and a worker in one process, joined by the in-process transport: the
 * base of the dry run and of `--serve-api`.
 */
import type { Logger } from 'pino';
import { Harness, type EndpointJobs } from '../harness/index.js';
import { InProcessTransport } from '../transports/index.js';
import { WorkerRuntime, logJobEnd, type Handler, type WorkerConfig } from '../worker/index.js';

export interface LocalWorker {
  readonly harness: Harness;
  readonly endpoint: EndpointJobs;
  readonly runtime: WorkerRuntime;
  readonly transport: InProcessTransport;
}

export function startLocalWorker(handler: Handler<unknown>, config: WorkerConfig, logger: Logger, harness = new Harness()): LocalWorker {
  const endpoint = harness.endpoint(config.endpointId);
  const transport = new InProcessTransport({ endpoint, ...(config.workerId ? { workerId: config.workerId } : {}) });
  const runtime = new WorkerRuntime(handler, config, transport, logger, {
    onJobEnd: (job, outcome) => logJobEnd(logger, job, outcome),
  });
  void runtime.start();
  return { harness, endpoint, runtime, transport };
}
