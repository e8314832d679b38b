/**
 * @module harness/launcher/worker-observation
 * What a scaling round reads of an endpoint's launched workers: each worker's state for
 * the scaler (readiness from the presence table, idle since its last job), and the
 * workers-per-state gauge.
 */
import type { Gauge } from 'prom-client';
import { countStates, leftInitializing, type EndpointRuntime, type Presence } from './endpoint-runtime.js';
import type { LaunchedWorker } from './launched-worker.js';
import type { WorkerSnapshot } from './scale-decision.js';

const STATES = ['initializing', 'idle', 'running', 'stopping', 'throttled'] as const;

/**
 * Update readiness from the presence table; the scaler's view of each worker. A worker
 * is idle since the later of its readiness and its last job activity (job-activity.ts:
 * takes and ends from store events), never from what a tick happened to sample.
 * `ready` is told once per worker, when it is seen ready (from `leftAt`).
 */
export function observeWorkers(
  runtime: EndpointRuntime,
  workers: Presence,
  now: number,
  ready: (worker: LaunchedWorker, leftAt: number) => void,
): WorkerSnapshot[] {
  const snapshots: WorkerSnapshot[] = [];
  for (const worker of runtime.workers.values()) {
    const presence = workers.get(worker.id);
    if (worker.readyAt === undefined) {
      // Out of initializing on two ticks in a row (see leftInitializingAt), or holding a job: ready.
      if (!leftInitializing(presence)) worker.leftInitializingAt = undefined;
      else if (worker.leftInitializingAt === undefined && presence.jobIds.length === 0) worker.leftInitializingAt = presence.lastSeenAt;
      else ready(worker, worker.leftInitializingAt ?? presence.lastSeenAt);
    }
    const busy = (presence?.jobIds.length ?? 0) > 0;
    if (busy) worker.lastJobAt = now;
    const state = worker.state(busy);
    const readyAt = worker.readyAt ?? now;
    snapshots.push({ id: worker.id, state, ...(state === 'idle' ? { idleSince: Math.max(readyAt, worker.lastJobAt ?? readyAt) } : {}) });
  }
  return snapshots;
}

/** Set the endpoint's workers-per-state gauge (serverless_worker_harness_workers). */
export function setWorkerGauge(gauge: Gauge<'endpoint' | 'state'>, endpointId: string, runtime: EndpointRuntime, presence: Presence): void {
  const counts: Record<(typeof STATES)[number], number> = { ...countStates(runtime, presence), throttled: runtime.throttled };
  for (const state of STATES) gauge.set({ endpoint: endpointId, state }, counts[state]);
}
