/**
 * @module harness/launcher/endpoint-runtime
 * The launcher's state of one endpoint (its workers, crash backoff,
 * throttled count) and what the views read from it: state counts and pods.
 */
import type { StoredWorker } from 'serverless-worker/internal';
import type { Pod } from '../management/index.js';
import { CrashBackoff, type CrashBackoffSettings } from './crash-backoff.js';
import type { LaunchedHealth } from './launched-workers-view.js';
import type { LaunchedWorker } from './launched-worker.js';
import type { LaunchedWorkerState } from './scale-decision.js';

export interface EndpointRuntime {
  readonly workers: Map<string, LaunchedWorker>;
  readonly backoff: CrashBackoff;
  throttled: number;
  /** Why workers keep crashing during start-up (launcher-reports.ts); cleared by a worker that gets ready. */
  unhealthyReason: string | undefined;
  /** Why no worker can start at all (the backend's startProblem: an image missing); rechecked while workers are wanted. */
  startProblem: string | undefined;
  /** Since when (harness clock) no worker could start (a start problem or start-up crashes in a row), or undefined (start-failures.ts). */
  cannotStartSince: number | undefined;
}

export function newEndpointRuntime(backoff: CrashBackoffSettings): EndpointRuntime {
  return {
    workers: new Map(),
    backoff: new CrashBackoff(backoff),
    throttled: 0,
    unhealthyReason: undefined,
    startProblem: undefined,
    cannotStartSince: undefined,
  };
}

/** The endpoint's workers as the job store knows them (EndpointJobs.workers.all()), by id. */
export type Presence = ReadonlyMap<string, StoredWorker>;

/** Whether the worker holds a job now. */
export function holdsJob(presence: Presence, workerId: string): boolean {
  return (presence.get(workerId)?.jobIds.length ?? 0) > 0;
}

/**
 * Whether the worker's presence shows it past its start-up phase: it asked for a job or
 * holds one. A heartbeat alone does not: workers send heartbeats while `init` runs.
 */
export function leftInitializing(worker: StoredWorker | undefined): worker is StoredWorker {
  return worker !== undefined && (!worker.initializing || worker.jobIds.length > 0);
}

/** The worker's state as the harness sees it now: out of initializing once its presence says so, even before the next tick records it. */
function stateNow(worker: LaunchedWorker, presence: Presence): LaunchedWorkerState {
  return worker.state(holdsJob(presence, worker.id), leftInitializing(presence.get(worker.id)));
}

/** The launched workers of the endpoint counted by state. */
export function countStates(runtime: EndpointRuntime, presence: Presence): Record<LaunchedWorkerState, number> {
  const counts: Record<LaunchedWorkerState, number> = { initializing: 0, idle: 0, running: 0, stopping: 0 };
  for (const worker of runtime.workers.values()) counts[stateNow(worker, presence)]++;
  return counts;
}

/** The launched workers of the endpoint as pods. */
export function podsOf(endpointId: string, runtime: EndpointRuntime, workers: Presence, gpuName: string): Pod[] {
  return [...runtime.workers.values()].map((worker) => {
    const presence = workers.get(worker.id);
    return {
      id: worker.id,
      name: worker.id,
      desiredStatus: worker.stopping ? 'EXITED' : 'RUNNING',
      endpointId,
      imageName: worker.imageName,
      publicIp: null,
      ports: [],
      portMappings: {},
      gpu: worker.gpus.length > 0 ? { typeId: gpuName, count: worker.gpus.length } : null,
      jobsInProgress: [...(presence?.jobIds ?? [])],
      workerState: stateNow(worker, workers),
      createdAt: new Date(worker.spawnedAt).toISOString(),
      lastSeenAt: presence ? new Date(presence.lastSeenAt).toISOString() : null,
    };
  });
}

/** The endpoint's workers by state, with those that joined by hand counted as before, and whether it is healthy. */
export function launchedHealth(runtime: EndpointRuntime, presence: Presence): LaunchedHealth {
  const counts = countStates(runtime, presence);
  for (const worker of presence.values()) {
    if (runtime.workers.has(worker.id)) continue;
    if (worker.jobIds.length > 0) counts.running++;
    else counts.idle++;
  }
  const reason = runtime.startProblem ?? runtime.unhealthyReason;
  return { ...counts, throttled: runtime.throttled, healthy: reason === undefined, ...(reason !== undefined ? { unhealthyReason: reason } : {}) };
}
