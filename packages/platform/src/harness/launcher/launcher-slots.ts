/**
 * @module harness/launcher/launcher-slots
 * What the launcher asks of the stores it may share with other machines: the workers
 * other machines run for the endpoint (their slots, slot-claims.ts) as the scaler sees
 * them, the id of the next worker this machine starts, the endpoint's template, and
 * whether a GPU endpoint is left to machines with GPUs.
 */
import type { Endpoint, ManagementStore, Template } from '../management/index.js';
import type { Presence } from './endpoint-runtime.js';
import type { WorkerSnapshot } from './scale-decision.js';
import { machineTag, type SlotClaims } from './slot-claims.js';

/**
 * The endpoint's workers on other machines (their live slots), for the scaler: counted
 * against workersMax and the load like local ones, never stopped from here. `running`
 * once the job store has heard from them, else `initializing`.
 */
export async function workersElsewhere(slots: SlotClaims, endpointId: string, presence: Presence, now: number): Promise<WorkerSnapshot[]> {
  if (!slots.shared) return [];
  const ids = await slots.heldElsewhere(endpointId, now);
  return ids.map((id) => ({ id, state: presence.has(id) ? 'running' : 'initializing' }));
}

/** `<endpoint>-<n>` on one machine; `<endpoint>-<machine>-<n>` when machines share the slots (ids stay unique across them). */
export function launchedWorkerId(slots: SlotClaims, endpointId: string, seq: number): string {
  return slots.shared ? `${endpointId}-${machineTag(slots.machineId)}-${seq}` : `${endpointId}-${seq}`;
}

export { LocalSlotClaims, type SlotClaims } from './slot-claims.js';

/** The endpoint's template, or undefined when it is gone (deleted meanwhile, maybe through another harness). */
export async function templateOf(store: ManagementStore, endpoint: Endpoint): Promise<Template | undefined> {
  try {
    return await store.getTemplate(endpoint.templateId);
  } catch {
    return undefined;
  }
}

/**
 * A GPU endpoint on a machine with no GPU known while machines share the slots: its
 * workers start on machines that have some. A machine told `gpus: 'none'` runs them
 * without device assignment instead, as a machine alone always does.
 */
export function leavesToGpuMachines(slots: SlotClaims, endpoint: Endpoint, gpus: number | 'none'): boolean {
  return slots.shared && endpoint.computeType === 'GPU' && gpus === 0;
}

/** Why the launcher starts no worker of an endpoint here, in the words the dashboard shows. */
export const NOT_LAUNCHED = {
  gpuMachines: (machineId: string): string =>
    `GPU endpoint: no GPUs known on this harness (${machineId}), so its workers start on harnesses with GPUs that share the database; start one with --gpus, or give this one --gpus none to run them here without device assignment`,
  noImage: (imageName: string): string =>
    `no --image command names the template's imageName "${imageName}" (and no --launcher docker): start its workers by hand, or give the harness --image ${imageName}=COMMAND`,
  noTemplate: (templateId: string): string => `its template ${templateId} is gone: no worker can start`,
} as const;
