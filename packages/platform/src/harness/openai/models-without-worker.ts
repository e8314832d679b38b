/**
 * @module harness/openai/models-without-worker
 * `GET /{endpoint}/openai/v1/models` is answered by a worker (the inference server lists
 * its models). With no worker at all (none running, idle or starting, and no launcher
 * running this endpoint's workers to start one), the call is answered at once with 400
 * SW_NO_WORKER_AVAILABLE, as the platform answers a load-balancing request no worker can
 * take, instead of queuing a job nobody takes and waiting the whole OpenAI timeout
 * (600 s by default; issue 32). With a launcher, or any worker, it runs as a job.
 */
import { ServerlessWorkerError } from 'serverless-worker/internal';
import { existingEndpointOf, type QueueApiContext } from '../queue-api/context.js';

/** Whether some worker serves, or will serve, `params`' endpoint. */
async function hasWorker(context: QueueApiContext, params: unknown): Promise<{ endpointId: string; served: boolean }> {
  const { endpointId, endpoint } = await existingEndpointOf(context, params);
  if ((await context.launchedWorkers?.health(endpointId)) !== undefined) return { endpointId, served: true };
  if (!endpoint) return { endpointId, served: false };
  const { workers } = await endpoint.health();
  if (workers.idle + workers.running > 0) return { endpointId, served: true };
  return { endpointId, served: (await endpoint.workers.initializingCount()) > 0 };
}

/** Throws SW_NO_WORKER_AVAILABLE when no worker serves the endpoint and none will be started. */
export async function refuseWithoutWorker(context: QueueApiContext, params: unknown): Promise<void> {
  const { endpointId, served } = await hasWorker(context, params);
  if (served) return;
  throw new ServerlessWorkerError(
    'SW_NO_WORKER_AVAILABLE',
    `No worker serves endpoint ${endpointId}: its models are listed by a running worker, and none is running, idle or starting, nor launched by the harness. Start a worker for it (or give the harness its image) and call again.`,
    { endpointId },
  );
}
