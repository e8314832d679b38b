/**
 * @module harness/dashboard/built-in-panels
 * The dashboard's overview panels for parts of the harness that have no view of their
 * own yet: the load-balancing pools (each worker's /ping state, requests in flight, cold
 * start) and the workers the launcher runs (pods with their state and GPUs, /health
 * counts of each endpoint it runs). The page shows them as tables (ui/panels-view.js). A panel is read once a tick, only while a page is open.
 */
import type { Harness } from 'serverless-worker/internal';
import type { LoadBalancing } from '../load-balancing/index.js';
import type { LaunchedWorkersView } from '../launcher/launched-workers-view.js';
import type { DashboardPanel } from './settings.js';

/** The load-balancing panel's data: each pool with its workers and those gone lately, or a sentence when there is none. */
export function loadBalancingPanelData(loadBalancing: LoadBalancing) {
  // A pool whose workers all went stays listed with them: a dead worker leaves a trace.
  const pools = loadBalancing.pools().filter((pool) => pool.size > 0 || loadBalancing.gone(pool.endpointId).length > 0);
  if (pools.length === 0) return 'none registered';
  return pools.map((pool) => ({
    endpointId: pool.endpointId,
    counts: pool.counts(),
    workers: pool.all().map((worker) => pool.view(worker)),
    gone: loadBalancing.gone(pool.endpointId).map((entry) => ({ ...entry.worker, at: new Date(entry.at).toISOString(), reason: entry.reason })),
  }));
}

/** The launcher panel's data: /health per endpoint it runs, its worker processes; a sentence when the launcher is off. */
export async function launcherPanelData(harness: Harness, launched: LaunchedWorkersView | undefined) {
  if (!launched) return 'the launcher is off';
  const pods = await launched.pods();
  // Every endpoint the launcher runs, with or without a process now (a crashing command has none most of the time).
  const health = await Promise.all([...harness.endpoints()].map(async (endpoint) => [endpoint.id, await launched.health(endpoint.id)] as const));
  return {
    /** Scale events recorded so far (the workers view reads them from /ui/api/scale-events when this moves). */
    scaleEvents: launched.scaleEventCount ?? 0,
    health: Object.fromEntries(health.filter(([, counts]) => counts !== undefined)),
    workers: pods.map((pod) => ({
      id: pod.id,
      endpointId: pod.endpointId,
      state: pod.workerState,
      gpu: pod.gpu,
      jobs: pod.jobsInProgress,
      since: pod.createdAt,
    })),
  };
}

/** What the panels' `data` holds (ui/panels-view.js reads them by panel id). */
export type LoadBalancingPanelData = ReturnType<typeof loadBalancingPanelData>;
export type LauncherPanelData = Awaited<ReturnType<typeof launcherPanelData>>;

/** The panels every dashboard shows (empty ones say so). */
export function builtInPanels(harness: Harness, loadBalancing: LoadBalancing | undefined, launchedWorkers?: LaunchedWorkersView): DashboardPanel[] {
  const panels: DashboardPanel[] = [];
  if (loadBalancing) {
    panels.push({
      id: 'load-balancing',
      title: 'Load-balancing workers (/lb/{endpoint}/...)',
      snapshot: () => loadBalancingPanelData(loadBalancing),
    });
  }
  panels.push({
    id: 'launcher',
    title: 'Launched workers (serverless-worker harness --image)',
    snapshot: () => launcherPanelData(harness, launchedWorkers),
  });
  return panels;
}
