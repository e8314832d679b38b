/**
 * @module harness/launcher/endpoint-runtime
 * The launcher's state of one endpoint (its worker processes, crash backoff,
 * throttled count) and what the views read from it: state counts and pods.
 */
import type { EndpointJobs } from '../endpoint-jobs.js';
import type { Pod } from '../management/index.js';
import { CrashBackoff, type CrashBackoffSettings } from './crash-backoff.js';
import type { LaunchedWorker } from './launched-worker.js';
import type { LaunchedWorkerState } from './scale-decision.js';

export interface EndpointRuntime {
  readonly workers: Map<string, LaunchedWorker>;
  readonly backoff: CrashBackoff;
  throttled: number;
  unhealthyReason: string | undefined;
  /** `jobId@startedAt` of running jobs whose wait was already counted. */
  waitsSeen: Set<string>;
}

export function newEndpointRuntime(backoff: CrashBackoffSettings): EndpointRuntime {
  return { workers: new Map(), backoff: new CrashBackoff(backoff), throttled: 0, unhealthyReason: undefined, waitsSeen: new Set() };
}

/** Whether the worker holds a job now. */
export function holdsJob(jobs: EndpointJobs | undefined, workerId: string): boolean {
  return (jobs?.workers.get(workerId)?.jobs.size ?? 0) > 0;
}

/** The worker's state as the harness sees it now: heard from means past initializing, even before the next tick records it. */
function stateNow(worker: LaunchedWorker, jobs: EndpointJobs | undefined): LaunchedWorkerState {
  return worker.state(holdsJob(jobs, worker.id), jobs?.workers.get(worker.id) !== undefined);
}

/** The launched workers of the endpoint counted by state. */
export function countStates(runtime: EndpointRuntime, jobs: EndpointJobs | undefined): Record<LaunchedWorkerState, number> {
  const counts: Record<LaunchedWorkerState, number> = { initializing: 0, idle: 0, running: 0, stopping: 0 };
  for (const worker of runtime.workers.values()) counts[stateNow(worker, jobs)]++;
  return counts;
}

/** The launched workers of the endpoint as pods. */
export function podsOf(endpointId: string, runtime: EndpointRuntime, jobs: EndpointJobs | undefined, gpuName: string): Pod[] {
  return [...runtime.workers.values()].map((worker) => {
    const presence = jobs?.workers.get(worker.id);
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
      jobsInProgress: [...(presence?.jobs ?? [])],
      workerState: stateNow(worker, jobs),
      createdAt: new Date(worker.spawnedAt).toISOString(),
      lastSeenAt: presence ? new Date(presence.lastSeenAt).toISOString() : null,
    };
  });
}
