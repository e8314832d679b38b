/**
 * @module harness/launcher/launcher-reports
 * What the launcher says about its workers, in the log, the metrics and the scale
 * events at once: a worker ready (its cold start, the endpoint healthy again), a start
 * problem of the endpoint's backend (an image missing), a job's
 * wait for a worker, a worker that exited (told to, or a crash with its backoff and,
 * after start-up crashes in a row, the endpoint unhealthy). The launcher decides; this
 * records and reports, and keeps the endpoint runtime's health and backoff in step.
 */
import type { Logger } from 'pino';
import type { Clock, Metrics } from 'serverless-worker/internal';
import type { EndpointRuntime } from './endpoint-runtime.js';
import type { LaunchedWorker } from './launched-worker.js';
import type { WorkerExit } from './launch-backend.js';
import type { JobWait } from './queue-snapshot.js';
import type { ScaleEventInput, ScaleEvents } from './scale-events.js';

export class LauncherReports {
  readonly #log: Logger;
  readonly #metrics: Metrics | undefined;
  readonly #events: ScaleEvents;
  readonly #clock: Clock;

  constructor(log: Logger, metrics: Metrics | undefined, events: ScaleEvents, clock: Clock) {
    this.#log = log;
    this.#metrics = metrics;
    this.#events = events;
    this.#clock = clock;
  }

  /** Record a scale event with the endpoint's worker processes after it. */
  event(runtime: EndpointRuntime, event: Omit<ScaleEventInput, 'at' | 'workers'>): void {
    this.#events.add({ ...event, at: this.#clock.now(), workers: runtime.workers.size });
  }

  /**
   * The worker left initializing at `leftAt`: it asked for a job (its presence's
   * lastSeenAt when first seen so: that request, or a heartbeat since, within a tick). Its
   * cold start is spawn to then; only now does the endpoint's command count as working
   * (backoff reset, healthy again).
   */
  ready(runtime: EndpointRuntime, worker: LaunchedWorker, leftAt: number, now: number): void {
    const endpointId = worker.endpointId;
    worker.readyAt = Math.min(now, Math.max(worker.spawnedAt, leftAt));
    const coldStartMs = worker.readyAt - worker.spawnedAt;
    const what = `cold start ${coldStartMs} ms (spawn to first job request)`;
    this.#metrics?.harnessWorkerColdStartSeconds.observe({ endpoint: endpointId }, coldStartMs / 1000);
    this.#log.info({ endpointId, workerId: worker.id, coldStartMs }, `worker ${worker.id} ready: ${what}`);
    this.event(runtime, { endpointId, kind: 'ready', workerId: worker.id, message: `ready: ${what}` });
    if (runtime.unhealthyReason !== undefined) {
      this.#log.info({ endpointId }, `endpoint ${endpointId} healthy again: a worker started`);
      this.event(runtime, { endpointId, kind: 'healthy', message: 'healthy again: a worker started' });
    }
    runtime.backoff.recordHealthyStart();
    runtime.unhealthyReason = undefined;
  }

  /**
   * What the backend says keeps every worker of the endpoint from starting (an image
   * missing), or undefined: kept on the runtime, where it shows as the endpoint's
   * unhealthy reason, with one error line and scale event when it appears and a line when it clears.
   */
  startProblem(runtime: EndpointRuntime, endpointId: string, imageName: string, problem: string | undefined): void {
    if (problem !== undefined && problem !== runtime.startProblem) {
      this.#log.error({ endpointId, imageName, reason: problem }, `endpoint ${endpointId} unhealthy: ${problem}`);
      this.event(runtime, { endpointId, kind: 'unhealthy', message: `unhealthy: ${problem}` });
    } else if (problem === undefined && runtime.startProblem !== undefined) {
      this.#log.info({ endpointId, imageName }, `endpoint ${endpointId}: workers can start again`);
    }
    runtime.startProblem = problem;
  }

  /** A job taken by a launched worker: its wait for a worker, in the metric (and the log when 1 s or more). */
  wait(endpointId: string, { jobId, workerId, waitMs }: JobWait): void {
    this.#metrics?.harnessJobWaitSeconds.observe({ endpoint: endpointId }, waitMs / 1000);
    if (waitMs >= 1_000) this.#log.info({ endpointId, jobId, waitMs, workerId }, `job ${jobId} waited ${waitMs} ms for a worker`);
  }

  /**
   * The worker's process exited (it is out of `runtime.workers` already). Told to stop:
   * an exit line. Otherwise a crash, `duringStartup` when it never left initializing:
   * the backoff grows, and start-up crashes in a row mark the endpoint unhealthy.
   */
  exited(runtime: EndpointRuntime, worker: LaunchedWorker, exit: WorkerExit, requeued: readonly string[], duringStartup: boolean, now: number): void {
    const { code, signal } = exit;
    const endpointId = worker.endpointId;
    const fields = { endpointId, workerId: worker.id, code, signal, requeued };
    const requeuedField = requeued.length > 0 ? { requeued: [...requeued] } : {};
    if (worker.stopping) {
      const how = `exited (code ${code}, signal ${signal})${worker.killed ? ' after SIGKILL: it outlived the shutdown deadline' : ''}`;
      this.#log[worker.killed ? 'warn' : 'info']({ ...fields, killed: worker.killed }, `worker ${worker.id} ${how}`);
      this.event(runtime, { endpointId, kind: 'exit', workerId: worker.id, message: how, ...requeuedField });
      return;
    }
    const phase = duringStartup ? 'during start-up' : 'while running';
    const waitMs = runtime.backoff.recordCrash(now, duringStartup);
    this.#metrics?.harnessWorkerCrashesTotal.inc({ endpoint: endpointId, phase: duringStartup ? 'startup' : 'running' });
    this.#log.warn(
      { ...fields, duringStartup, nextStartInMs: waitMs },
      `worker ${worker.id} crashed ${phase} (code ${code}, signal ${signal}); next start in ${waitMs} ms`,
    );
    this.event(runtime, {
      endpointId,
      kind: 'crash',
      workerId: worker.id,
      message: `crashed ${phase} (code ${code}, signal ${signal}); backoff: next start in ${waitMs} ms`,
      nextStartInMs: waitMs,
      ...requeuedField,
    });
    if (!runtime.backoff.unhealthy) return;
    const last = exit.startError ?? `code ${code}, signal ${signal}`;
    const reason = `the worker command exited during start-up ${runtime.backoff.startupCrashes} times in a row (last: ${last}); retrying every ${waitMs} ms`;
    if (runtime.unhealthyReason === undefined) {
      this.#log.error({ endpointId, reason }, `endpoint ${endpointId} unhealthy: ${reason}`);
      this.event(runtime, { endpointId, kind: 'unhealthy', message: `unhealthy: ${reason}` });
    }
    runtime.unhealthyReason = reason;
  }
}
