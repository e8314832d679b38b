/**
 * @module harness/launcher/launched-workers-view
 * What the HTTP layer reads about workers the harness launches itself (see
 * harness/launcher): /health counts from real processes, GET /logs, and the pods of
 * the management API. The server is given it (its `launchedWorkers` option); without one the
 * routes fall back to the workers that joined by hand.
 */
import type { Pod } from '../management/index.js';
import type { ScaleEvent } from './scale-events.js';
import type { WorkerLogLine } from './worker-logs.js';
import type { JobLinesRead } from './job-lines.js';

export interface LaunchedHealth {
  initializing: number;
  idle: number;
  running: number;
  /** Workers wanted that cannot start: no GPU free. */
  throttled: number;
  /** Workers told to stop and not yet gone. */
  stopping: number;
  /** false when the worker command keeps crashing during start-up. */
  healthy: boolean;
  /** Why the endpoint is unhealthy; absent when healthy. */
  unhealthyReason?: string;
}

export interface LaunchedWorkersView {
  /** Counts for /health, or undefined when the launcher does not run this endpoint's workers. */
  health(endpointId: string): Promise<LaunchedHealth | undefined>;
  /** The last `max` output lines of the endpoint's workers, oldest first. */
  logs(endpointId: string, max?: number, workerId?: string): WorkerLogLine[];
  /** One job's own lines, kept by bytes and time beyond the endpoint's last lines (job-lines.ts), and why some are missing; optional. */
  jobLogs?(endpointId: string, jobId: string): JobLinesRead | undefined;
  /** Why the launcher starts no worker of the endpoint here (no command for its image, GPUs left to other harnesses), or undefined; optional. */
  notLaunchedReason?(endpointId: string): string | undefined;
  /** Whether this harness's launcher started the worker (false: joined by hand, another harness's, or left by an earlier run); optional. */
  launched?(endpointId: string, workerId: string): boolean;
  /** Every launched worker as a pod. */
  pods(): Promise<Pod[]>;
  /** The last `max` scale events (started, ready, stopped, exited, crashed, ...) of one endpoint or all, oldest first; optional. */
  scaleEvents?(endpointId?: string, max?: number): ScaleEvent[];
  /** Scale events recorded so far: a revision number that moves with each new one; optional. */
  readonly scaleEventCount?: number;
}
