/**
 * @module harness/launcher/endpoint-launch
 * Whether the launcher runs an endpoint's workers here, in a scaling round: what it
 * starts them with (the template, the backend that runs its image, the endpoint's jobs),
 * or why not (the words the dashboard shows) and, for a reason the operator can fix, a
 * warning the launcher logs once.
 */
import type { EndpointJobs, Harness } from 'serverless-worker/internal';
import type { Endpoint, ManagementStore, Template } from '../management/index.js';
import type { LaunchBackend } from './launch-backend.js';
import { NOT_LAUNCHED, leavesToGpuMachines, templateOf, type SlotClaims } from './launcher-slots.js';

export type EndpointLaunch =
  | { readonly launch: true; readonly template: Template; readonly backend: LaunchBackend; readonly jobs: EndpointJobs }
  | {
      readonly launch: false;
      /** Why no worker starts here; none while the endpoint's jobs are not known yet. */
      readonly reason?: string;
      /** A warning to log once per key. */
      readonly warn?: { readonly key: string; readonly fields: Record<string, unknown> };
    };

export interface EndpointLaunchContext {
  readonly harness: Harness;
  readonly store: ManagementStore;
  readonly slots: SlotClaims;
  /** Asked in order: the first that runs the template's image. */
  readonly backends: readonly LaunchBackend[];
  /** The GPUs of this machine: `none` (told to run GPU endpoints without devices) or a count. */
  readonly gpus: number | 'none';
}

export async function endpointLaunch(context: EndpointLaunchContext, endpoint: Endpoint): Promise<EndpointLaunch> {
  const { harness, store, slots } = context;
  const template = await templateOf(store, endpoint);
  const backend = template ? context.backends.find((candidate) => candidate.runs(template)) : undefined;
  const jobs = harness.findEndpoint(endpoint.id) ?? (store.kind === 'postgres' ? harness.createEndpoint(endpoint.id) : undefined);
  if (leavesToGpuMachines(slots, endpoint, context.gpus)) {
    return { launch: false, reason: NOT_LAUNCHED.gpuMachines(slots.machineId), warn: { key: `no-gpus:${endpoint.id}`, fields: { endpointId: endpoint.id } } };
  }
  if (!template) return { launch: false, reason: NOT_LAUNCHED.noTemplate(endpoint.templateId) };
  if (!backend) {
    return {
      launch: false,
      reason: NOT_LAUNCHED.noImage(template.imageName),
      warn: { key: `image:${endpoint.id}`, fields: { endpointId: endpoint.id, imageName: template.imageName } },
    };
  }
  if (!jobs) return { launch: false };
  return { launch: true, template, backend, jobs };
}
