/**
 * @module harness/launcher/scale-decision
 * The scaler's decision as a pure function: from an endpoint's settings, its queue,
 * its workers and what may start now (GPUs free, crash backoff), how many workers to
 * start, which idle ones to stop, and how many wanted workers are throttled. No
 * clock, no processes: the launcher feeds it a snapshot every tick.
 *
 * Rules (the platform's, as its documentation describes them):
 * - keep `workersMin` workers; never more than `workersMax` processes (workers still
 *   stopping included);
 * - REQUEST_COUNT: about one worker per `scalerValue` jobs queued or running;
 * - QUEUE_DELAY: one more worker per job that waited longer than `scalerValue`
 *   seconds, less the workers already starting; an endpoint with no worker at all
 *   starts one for its first job;
 * - `lowPriority` jobs never cause a scale-up (they run on workers started for
 *   other reasons);
 * - a worker idle for `idleTimeout` seconds stops, down to `workersMin`, the longest
 *   idle first (none while jobs are queued: an idle worker is about to take them).
 */

export interface ScaleSettings {
  workersMin: number;
  workersMax: number;
  scalerType: 'QUEUE_DELAY' | 'REQUEST_COUNT';
  scalerValue: number;
  /** Seconds. */
  idleTimeout: number;
}

export interface QueuedJobSnapshot {
  /** Epoch ms the job (re)entered the queue. */
  queuedAt: number;
  lowPriority: boolean;
}

export type LaunchedWorkerState = 'initializing' | 'idle' | 'running' | 'stopping';

export interface WorkerSnapshot {
  id: string;
  state: LaunchedWorkerState;
  /** For idle workers: epoch ms since when it has been idle. */
  idleSince?: number;
}

export interface ScaleInput {
  settings: ScaleSettings;
  /** Epoch ms. */
  now: number;
  /** Jobs IN_QUEUE. */
  queued: readonly QueuedJobSnapshot[];
  /** Jobs IN_PROGRESS that are not lowPriority. */
  runningJobs: number;
  workers: readonly WorkerSnapshot[];
  /** Workers that may start now: free GPUs / gpuCount (Infinity for CPU endpoints). */
  startable: number;
  /** Crash backoff in effect: start nothing now. */
  startBlocked: boolean;
}

export interface ScaleDecision {
  /** Workers wanted, within [workersMin, workersMax]. */
  desired: number;
  /** How many workers to start now. */
  start: number;
  /** Wanted workers that cannot start for lack of GPUs. */
  throttled: number;
  /** Ids of idle workers to stop. */
  stop: string[];
}

/** How many workers the load asks for (before workersMin/Max). */
function loadWants(input: ScaleInput, alive: number, initializing: number): number {
  const { settings, now, queued, runningJobs } = input;
  const normal = queued.filter((job) => !job.lowPriority);
  if (settings.scalerType === 'REQUEST_COUNT') {
    return Math.ceil((normal.length + runningJobs) / settings.scalerValue);
  }
  const overdue = normal.filter((job) => now - job.queuedAt > settings.scalerValue * 1000).length;
  const fromDelay = alive + Math.max(0, overdue - initializing);
  // Nothing runs at all: the first job starts a worker without waiting for the delay.
  return alive === 0 && normal.length > 0 ? Math.max(1, fromDelay) : fromDelay;
}

/** Decide one tick of scaling for one endpoint. */
export function decideScaling(input: ScaleInput): ScaleDecision {
  const { settings, now, workers } = input;
  const active = workers.filter((worker) => worker.state !== 'stopping');
  const alive = active.length;
  const initializing = active.filter((worker) => worker.state === 'initializing').length;
  const desired = Math.min(settings.workersMax, Math.max(settings.workersMin, loadWants(input, alive, initializing)));

  // Workers still stopping count against workersMax: never more processes than that.
  const missing = Math.max(0, Math.min(desired - alive, settings.workersMax - workers.length));
  const possible = input.startBlocked ? 0 : Math.max(0, Math.min(missing, input.startable));
  const throttled = input.startBlocked ? 0 : missing - possible;

  // Idle workers past their idle timeout stop, longest idle first, down to workersMin;
  // none while jobs wait (an idle worker is about to take them).
  const keep = input.queued.length > 0 ? alive : settings.workersMin;
  const idleTimeoutMs = settings.idleTimeout * 1000;
  const expired = active
    .filter((worker) => worker.state === 'idle' && worker.idleSince !== undefined && now - worker.idleSince >= idleTimeoutMs)
    .sort((a, b) => (a.idleSince ?? 0) - (b.idleSince ?? 0));
  const stop = expired.slice(0, Math.max(0, alive - keep)).map((worker) => worker.id);

  return { desired, start: possible, throttled, stop };
}
