/**
 * @module harness/launcher/worker-lifecycle
 * A worker started and stopped by the launcher (launcher.ts). A start takes its GPUs from
 * the pool, builds its environment (launch-env.ts) and hands it to its backend (a process
 * or a container); a stop is SIGTERM, the shutdown deadline, then SIGKILL. Each is told
 * alike: the log line, the endpoint's worker log (starts), the metric and the scale event.
 * An exit gives back the worker's slot and GPUs, requeues its jobs, and wakes the scaler.
 */
import type { Logger } from 'pino';
import type { Clock, Harness, Metrics } from 'serverless-worker/internal';
import type { Endpoint, Template } from '../management/index.js';
import { leftInitializing, type EndpointRuntime } from './endpoint-runtime.js';
import type { GpuPool } from './gpu-pool.js';
import { launchEnv } from './launch-env.js';
import type { LaunchBackend, WorkerExit } from './launch-backend.js';
import { LaunchedWorker } from './launched-worker.js';
import type { LauncherReports } from './launcher-reports.js';
import type { SlotClaims } from './launcher-slots.js';
import type { WorkerLogs } from './worker-logs.js';

/** RUNPOD_PING_INTERVAL when the target names none, ms (the platform's). */
const DEFAULT_PING_INTERVAL_MS = 10_000;

export interface LauncherTarget {
  /** The harness's origin, like http://127.0.0.1:8000. */
  url: string;
  /** The harness's API key, passed to workers as RUNPOD_AI_API_KEY; default none. */
  apiKey?: string;
  /** RUNPOD_PING_INTERVAL for workers, ms; default 10 000. */
  pingIntervalMs?: number;
  /** How long the harness lets a worker stay silent before it counts as gone (ping interval x missed pings), ms; default 3 ping intervals. A container exits once its harness is unreachable this long. */
  silenceWindowMs?: number;
}

/** What the launcher lends each start and stop. */
export interface LifecycleContext {
  readonly pool: GpuPool | undefined;
  readonly shutdownDeadlineMs: number;
  readonly clock: Clock;
  readonly log: Logger;
  readonly logs: WorkerLogs;
  readonly reports: LauncherReports;
  readonly metrics: Metrics | undefined;
  onLine(endpointId: string, workerId: string, stream: 'stdout' | 'stderr', line: string): void;
  readonly slots: SlotClaims;
  readonly harness: Harness;
  /** Wake the scaling loop (a worker exited: it may be replaced). */
  wake(): void;
}

/** The worker to start: `id` holds a slot already; `desired` and `launchKey` are the scaling round's. */
export interface WorkerStart {
  readonly id: string;
  readonly endpoint: Endpoint;
  readonly template: Template;
  readonly backend: LaunchBackend;
  readonly runtime: EndpointRuntime;
  readonly now: number;
  readonly needsGpus: boolean;
  readonly desired: number;
  readonly launchKey: string;
}

/** Start the worker and add it to its endpoint's runtime; nothing when the GPUs it needs are not free. */
export function startWorker(context: LifecycleContext, target: LauncherTarget, request: WorkerStart): void {
  const { pool } = context;
  const { id, endpoint, template, backend, runtime, desired } = request;
  const gpus = request.needsGpus && pool ? pool.take(endpoint.gpuCount) : [];
  if (gpus === undefined) return;
  // The harness's own environment is the process backend's to add: a container gets only these.
  const env = launchEnv({ ...target, endpoint, template, workerId: id, gpus, pool, base: {} });
  const start = {
    id,
    endpoint,
    template,
    env,
    gpus,
    gpuVendor: pool?.vendor,
    shutdownDeadlineMs: context.shutdownDeadlineMs,
    harnessSilenceMs: target.silenceWindowMs ?? 3 * (target.pingIntervalMs ?? DEFAULT_PING_INTERVAL_MS),
    onLine: (stream: 'stdout' | 'stderr', line: string): void => context.onLine(endpoint.id, id, stream, line),
  };
  const worker = new LaunchedWorker({
    id,
    endpointId: endpoint.id,
    imageName: template.imageName,
    version: endpoint.version,
    launchKey: request.launchKey,
    run: () => backend.start(start),
    gpus,
    spawnedAt: request.now,
    clock: context.clock,
    onExit: (exit) =>
      void workerExited(context, runtime, worker, exit).catch((error: unknown) => context.log.error({ err: error }, 'worker exit handling failed')),
  });
  runtime.workers.set(id, worker);
  context.metrics?.harnessScaleUpsTotal.inc({ endpoint: endpoint.id });
  const alive = [...runtime.workers.values()].filter((w) => !w.stopping).length;
  const onGpus = gpus.length > 0 ? ` on GPUs ${gpus.join(',')}` : '';
  context.log.info(
    { endpointId: endpoint.id, workerId: id, as: worker.label, gpus, workers: alive, desired },
    `scale up: started worker ${id} (${alive} of ${desired} wanted, max ${endpoint.workersMax})${onGpus}`,
  );
  context.logs.add(endpoint.id, { at: context.clock.now(), workerId: id, stream: 'launcher', line: `started (${worker.label})` });
  context.reports.event(runtime, {
    endpointId: endpoint.id,
    kind: 'scale-up',
    workerId: id,
    message: `started (${worker.label}): ${alive} of ${desired} wanted, max ${endpoint.workersMax}${gpus.length > 0 ? `, GPUs ${gpus.join(',')}` : ''}`,
  });
}

export type StopReason = 'idle' | 'release' | 'endpoint-gone' | 'shutdown';

/** SIGTERM to the worker, SIGKILL after the shutdown deadline; nothing when it is stopping already. */
export function stopWorker(context: LifecycleContext, runtime: EndpointRuntime | undefined, worker: LaunchedWorker, reason: StopReason): void {
  if (worker.stopping) return;
  const deadlineMs = context.shutdownDeadlineMs;
  worker.stop(deadlineMs);
  context.metrics?.harnessScaleDownsTotal.inc({ endpoint: worker.endpointId, reason });
  context.log.info(
    { endpointId: worker.endpointId, workerId: worker.id, reason, shutdownDeadlineMs: deadlineMs },
    `scale down: SIGTERM to worker ${worker.id} (${reason}); SIGKILL after ${deadlineMs} ms`,
  );
  if (runtime)
    context.reports.event(runtime, {
      endpointId: worker.endpointId,
      kind: 'scale-down',
      workerId: worker.id,
      message: `SIGTERM (${reason}); SIGKILL after ${deadlineMs} ms`,
    });
}

/** The worker exited (stopped, crashed or killed): its slot and GPUs back, its jobs requeued, the exit told, the scaler woken. */
async function workerExited(context: LifecycleContext, runtime: EndpointRuntime, worker: LaunchedWorker, exit: WorkerExit): Promise<void> {
  const { endpointId } = worker;
  runtime.workers.delete(worker.id);
  context.slots
    .release(endpointId, worker.id)
    .catch((error: unknown) => context.log.warn({ err: error, workerId: worker.id }, 'could not release the worker slot: it lapses after its lease'));
  context.pool?.give(worker.gpus);
  const jobs = context.harness.findEndpoint(endpointId);
  // Out of initializing since the last tick (it asked for a job, then died): not a start-up crash.
  const leftStartup = worker.readyAt !== undefined || leftInitializing(await jobs?.workers.get(worker.id));
  const requeued = (await jobs?.requeueWorkerJobs(worker.id)) ?? [];
  context.logs.add(endpointId, { at: context.clock.now(), workerId: worker.id, stream: 'launcher', line: `exited (code ${exit.code}, signal ${exit.signal})` });
  context.reports.exited(runtime, worker, exit, requeued, !leftStartup, context.clock.now());
  context.wake();
}
