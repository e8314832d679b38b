/**
 * @module harness/pods-view
 * The management API's GET /pods from what the job harness knows: each worker seen
 * on an endpoint (in process, or over the worker API) is a RUNNING pod. The harness
 * does not know images, GPUs or ports, so those are null or empty.
 */
import type { Harness } from 'serverless-worker/internal';
import type { Pod, PodsView } from './management/index.js';
import type { LaunchedWorkersView } from './launcher/launched-workers-view.js';

export function harnessPodsView(harness: Harness, launchedWorkers?: LaunchedWorkersView): PodsView {
  const listPods = async (): Promise<Pod[]> => {
    // Workers the harness launched know more (image, GPUs, state): theirs come first.
    const pods: Pod[] = (await launchedWorkers?.pods()) ?? [];
    const launched = new Set(pods.map((pod) => pod.id));
    for (const endpoint of harness.endpoints()) {
      for (const worker of await endpoint.workers.all()) {
        if (launched.has(worker.id)) continue;
        pods.push({
          id: worker.id,
          name: worker.id,
          desiredStatus: 'RUNNING',
          endpointId: endpoint.id,
          imageName: null,
          publicIp: null,
          ports: [],
          portMappings: {},
          gpu: null,
          jobsInProgress: [...worker.jobIds],
          createdAt: new Date(worker.firstSeenAt).toISOString(),
          lastSeenAt: new Date(worker.lastSeenAt).toISOString(),
        });
      }
    }
    return pods;
  };
  return { listPods, getPod: async (id) => (await listPods()).find((pod) => pod.id === id) };
}
