/**
 * @module harness/launcher/launcher
 * Runs and scales the workers of the harness's endpoints itself. Every tick (on the
 * harness clock) it reads each endpoint of the management store; when the endpoint's
 * template has an imageName the launcher was given a command for (or, with a container
 * backend, any image), it looks at the endpoint's queue and workers, asks
 * `decideScaling` what to do, and starts workers (with the template's env, the
 * endpoint's settings, the worker API variables, its own RUNPOD_POD_ID and its GPUs)
 * as processes or containers (launch-backend.ts), or stops idle ones (SIGTERM, the
 * shutdown deadline, SIGKILL). A worker that exits on its own is replaced after a
 * backoff; start-up crashes in a row mark the endpoint unhealthy, and so does a backend
 * that cannot start any (an image missing from the Docker engine).
 *
 * Idle costs nothing: with nothing to watch it arms no tick until a job is queued, an
 * endpoint or template changes, or a worker exits (scaling-loop.ts).
 *
 *     const launcher = new Launcher({ images: { 'me/worker:1': { command: 'node worker.js' } } }, { harness, store, logger });
 *     createHarnessServer({ harness, launchedWorkers: launcher, ... });   // /health, /logs, /v1 pods read it
 *     launcher.start({ url: server.url });
 *     ...
 *     await launcher.close();
 */
import type { Logger } from 'pino';
import { type EndpointJobs, type Harness, type Metrics, parseOrThrow, ServerlessWorkerError } from 'serverless-worker/internal';
import type { LaunchedHealth, LaunchedWorkersView } from './launched-workers-view.js';
import type { Endpoint, ManagementStore, Pod, Template } from '../management/index.js';
import { holdsJob, launchedHealth, newEndpointRuntime, podsOf, type EndpointRuntime, type Presence } from './endpoint-runtime.js';
import { JobActivity } from './job-activity.js';
import { launchKey } from './launch-env.js';
import { LauncherReports } from './launcher-reports.js';
import { readQueue } from './queue-snapshot.js';
import { GpuPool } from './gpu-pool.js';
import type { LaunchedWorker } from './launched-worker.js';
import { startWorker, stopWorker, type LauncherTarget, type LifecycleContext, type StopReason, type WorkerStart } from './worker-lifecycle.js';
import type { LaunchBackend } from './launch-backend.js';
import { ProcessBackend } from './process-backend.js';
import type { ProcessRecords } from './process-records.js';
import { LauncherOptionsSchema, type LauncherOptionsInput, type LauncherSettings } from './launcher-options.js';
import { decideScaling } from './scale-decision.js';
import { cannotStartNow, failQueuedAndTell, jobsMustFail, noteStartState } from './start-failures.js';
import { ScalingLoop } from './scaling-loop.js';
import { ScaleEvents, type ScaleEvent } from './scale-events.js';
import type { WorkerLogLine } from './worker-logs.js';
import type { JobLinesRead } from './job-lines.js';
import { LauncherLines } from './launcher-lines.js';
import { observeWorkers, setWorkerGauge } from './worker-observation.js';
import { LocalSlotClaims, launchedWorkerId, workersElsewhere, type SlotClaims } from './launcher-slots.js';
import { endpointLaunch } from './endpoint-launch.js';

export interface LauncherDeps {
  harness: Harness;
  store: ManagementStore;
  logger: Logger;
  /** Where scale-ups, scale-downs, cold starts and job waits are counted; default none. */
  metrics?: Metrics;
  /** The worker slots a start claims first (PostgresSlotClaims: shared by every machine on the database); default this process's own. */
  slots?: SlotClaims;
  /** Runs the workers of every template whose image no `images` command names (docker/docker-backend.ts: `--launcher docker`); default none. */
  containers?: LaunchBackend;
  /** Where the worker processes are recorded, so a harness started after a crash stops what this one left (process-records.ts); default none. */
  processRecords?: ProcessRecords;
}

export type { LauncherTarget } from './worker-lifecycle.js';

export class Launcher implements LaunchedWorkersView {
  readonly settings: LauncherSettings;
  readonly #deps: LauncherDeps;
  readonly #log: Logger;
  readonly #pool: GpuPool | undefined;
  /** What the workers print: the endpoints' rings and each job's own lines (launcher-lines.ts). */
  readonly #lines: LauncherLines;
  readonly #events = new ScaleEvents();
  readonly #runtimes = new Map<string, EndpointRuntime>();
  readonly #warned = new Set<string>();
  /** Endpoints the launcher starts no worker of here, and why (the last round's word; the dashboard shows it). */
  readonly #notLaunched = new Map<string, string>();
  readonly #slots: SlotClaims;
  readonly #activity: JobActivity;
  readonly #reports: LauncherReports;
  /** Asked in order: the `images` commands first, then the container backend. */
  readonly #backends: LaunchBackend[] = [];
  #target: LauncherTarget | undefined;
  readonly #loop: ScalingLoop;
  readonly #unsubscribe: Array<() => void> = [];
  readonly #lifecycle: LifecycleContext;
  #closed = false;
  #seq = 0;

  constructor(options: LauncherOptionsInput, deps: LauncherDeps) {
    this.settings = parseOrThrow(LauncherOptionsSchema, options, 'SW_INVALID_OPTIONS', 'launcher options');
    this.#deps = deps;
    this.#log = deps.logger.child({ component: 'launcher' });
    this.#pool = this.settings.gpus && this.settings.gpus !== 'none' ? new GpuPool(this.settings.gpus) : undefined;
    this.#lines = new LauncherLines(this.settings.logLines, this.settings.jobLines, deps.harness.clock, this.#log);
    this.#slots = deps.slots ?? new LocalSlotClaims();
    if (Object.keys(this.settings.images).length > 0) this.#backends.push(new ProcessBackend(this.settings.images, deps.processRecords));
    if (deps.containers) this.#backends.push(deps.containers);
    if (this.#backends.length === 0)
      throw new ServerlessWorkerError(
        'SW_INVALID_OPTIONS',
        'launcher options: name at least one image (--image NAME=COMMAND) or run images as containers (--launcher docker)',
      );
    this.#reports = new LauncherReports(this.#log, deps.metrics, this.#events, deps.harness.clock);
    this.#activity = new JobActivity({
      store: deps.harness.store,
      clock: deps.harness.clock,
      workersOf: (endpointId) => this.#runtimes.get(endpointId)?.workers,
      onWait: (endpointId, wait) => this.#reports.wait(endpointId, wait),
      onError: (error) => this.#log.error({ err: error }, 'launcher job activity failed'),
    });
    this.#lifecycle = {
      pool: this.#pool,
      shutdownDeadlineMs: this.settings.shutdownDeadlineMs,
      clock: deps.harness.clock,
      log: this.#log,
      logs: this.#lines.workerLogs,
      reports: this.#reports,
      metrics: deps.metrics,
      onLine: (endpointId, workerId, stream, line) => this.#lines.add(endpointId, workerId, stream, line),
      slots: this.#slots,
      harness: deps.harness,
      wake: () => this.#loop.wake(),
    };
    this.#loop = new ScalingLoop({
      clock: deps.harness.clock,
      intervalMs: this.settings.tickMs,
      round: () => this.#scaleAll(),
      // The memory stores of this process tell of every change; PostgreSQL is written by other processes too.
      canSleep: () => deps.store.onChange !== undefined && deps.harness.store.kind === 'memory' && !this.#slots.shared,
      onError: (error) => this.#log.error({ err: error }, 'launcher tick failed'),
    });
  }

  /** Start ticking against the harness at `target.url`. */
  start(target: LauncherTarget): void {
    this.#target = target;
    this.#activity.start();
    this.#log.info(
      {
        images: Object.keys(this.settings.images),
        containers: this.#deps.containers?.kind ?? 'none',
        gpus: this.#pool ? `${this.#pool.total} ${this.#pool.vendor}` : 'none',
        machineId: this.#slots.machineId,
        sharedSlots: this.#slots.shared,
      },
      `launcher started on machine ${this.#slots.machineId}: ${this.#deps.containers ? `templates run their workers here as ${this.#deps.containers.kind} containers${Object.keys(this.settings.images).length > 0 ? ' (those with an --image command as processes)' : ''}` : 'templates with these images run their workers here'}`,
    );
    const { harness, store } = this.#deps;
    const wake = (): void => this.#loop.wake();
    this.#unsubscribe.push(
      store.onChange?.(wake) ?? (() => {}),
      harness.store.subscribe((event) => {
        if (event.type === 'queued' || event.type === 'resync') wake();
      }),
      harness.onEndpoint(wake),
    );
    this.#loop.start();
  }

  /** Whether the launcher sleeps: no tick armed or under way until a job, a change or an exit wakes it (scaling-loop.ts). */
  get sleeping(): boolean {
    return this.#loop.sleeping;
  }

  /** How many of the timer's scaling rounds have ended: a test waits for rounds to have run, not a fixed time. */
  get rounds(): number {
    return this.#loop.rounds;
  }

  /** One round of scaling over every endpoint (the timer calls it; public for tests). */
  async tick(): Promise<void> {
    await this.#scaleAll();
  }

  /** One round; answers whether anything is left to watch (a job queued or running, a worker, a worker wanted). */
  async #scaleAll(): Promise<boolean> {
    if (!this.#target || this.#closed) return false;
    let busy = false;
    const { harness, store } = this.#deps;
    const now = harness.clock.now();
    const live = new Set<string>();
    const notLaunched = new Map<string, string>();
    await this.#slots.renew(now);
    const context = {
      harness,
      store,
      slots: this.#slots,
      backends: this.#backends,
      gpus: this.settings.gpus === 'none' ? 'none' : (this.#pool?.total ?? 0),
    } as const;
    for (const endpoint of await store.listEndpoints()) {
      const launch = await endpointLaunch(context, endpoint);
      if (!launch.launch) {
        if (launch.reason !== undefined) notLaunched.set(endpoint.id, launch.reason);
        if (launch.warn && launch.reason !== undefined) this.#warnOnce(launch.warn.key, launch.warn.fields, launch.reason);
        continue;
      }
      live.add(endpoint.id);
      if (await this.#scale(endpoint, launch.template, launch.backend, launch.jobs, now)) busy = true;
    }
    this.#notLaunched.clear();
    for (const [endpointId, reason] of notLaunched) this.#notLaunched.set(endpointId, reason);
    for (const [endpointId, runtime] of this.#runtimes) {
      if (live.has(endpointId)) continue;
      for (const worker of runtime.workers.values()) this.#stopWorker(worker, 'endpoint-gone');
      if (runtime.workers.size > 0) {
        busy = true;
        continue;
      }
      this.#runtimes.delete(endpointId);
      this.#activity.unwatch(endpointId);
    }
    return busy;
  }

  /** Stop every worker (SIGTERM, deadline, SIGKILL) and wait until all have exited. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const unsubscribe of this.#unsubscribe.splice(0)) unsubscribe();
    // A round under way (a scale-up waiting on its slot claim) ends first and starts nothing more: no launch after the drain begins.
    await this.#loop.close();
    this.#activity.close();
    const all = [...this.#runtimes.values()].flatMap((runtime) => [...runtime.workers.values()]);
    for (const worker of all) this.#stopWorker(worker, 'shutdown');
    await Promise.all(all.map((worker) => worker.exited));
    for (const backend of this.#backends) await backend.close();
  }

  /**
   * SIGKILL every worker now (a second SIGTERM to the harness: it exits at once, its
   * workers must not outlive it); resolves once each has exited. Processes get the signal
   * before this returns; containers once the engine answers.
   */
  async killAll(): Promise<void> {
    this.#closed = true;
    void this.#loop.close();
    const all = [...this.#runtimes.values()].flatMap((runtime) => [...runtime.workers.values()]);
    for (const worker of all) worker.kill();
    await Promise.all(all.map((worker) => worker.exited));
  }

  // ------------------------------------------------------------------ views

  async health(endpointId: string): Promise<LaunchedHealth | undefined> {
    const runtime = this.#runtimes.get(endpointId);
    if (!runtime) return undefined;
    return launchedHealth(runtime, await this.#presence(endpointId));
  }

  notLaunchedReason(endpointId: string): string | undefined {
    return this.#notLaunched.get(endpointId);
  }

  launched(endpointId: string, workerId: string): boolean {
    return this.#runtimes.get(endpointId)?.workers.has(workerId) === true;
  }

  logs(endpointId: string, max?: number, workerId?: string): WorkerLogLine[] {
    return this.#lines.logs(endpointId, max, workerId);
  }

  /** One job's own lines (job-lines.ts) and why some are missing; undefined when none was seen. */
  jobLogs(endpointId: string, jobId: string): JobLinesRead | undefined {
    return this.#lines.jobLogs(endpointId, jobId);
  }

  /** The last `max` scale events of the endpoint (or of all endpoints), oldest first. */
  scaleEvents(endpointId?: string, max?: number): ScaleEvent[] {
    return this.#events.read(endpointId, max);
  }

  /** Scale events recorded so far (changes whenever one is added). */
  get scaleEventCount(): number {
    return this.#events.seq;
  }

  async pods(): Promise<Pod[]> {
    const pods: Pod[] = [];
    for (const [endpointId, runtime] of [...this.#runtimes]) {
      pods.push(...podsOf(endpointId, runtime, await this.#presence(endpointId), this.#pool?.name ?? 'GPU'));
    }
    return pods;
  }

  /** The endpoint's workers as the job store knows them now, by id. */
  async #presence(endpointId: string): Promise<Presence> {
    const workers = (await this.#deps.harness.findEndpoint(endpointId)?.workers.all()) ?? [];
    return new Map(workers.map((worker) => [worker.id, worker]));
  }

  // ------------------------------------------------------------------ scaling

  /** Scale the endpoint; answers whether it has anything to watch (a job queued or running, a worker, a worker wanted). */
  async #scale(endpoint: Endpoint, template: Template, backend: LaunchBackend, jobs: EndpointJobs, now: number): Promise<boolean> {
    const runtime = this.#runtime(endpoint.id);
    this.#activity.watch(jobs);
    const [presence, { queued, runningJobs }] = await Promise.all([this.#presence(endpoint.id), readQueue(jobs, endpoint)]);
    // A rolling release (template updated or changed, or a setting that changes how workers
    // run: gpuCount, computeType, vcpuCount, what the backend runs): idle workers started
    // otherwise go, the scaler starts new ones; busy ones follow once idle.
    const key = launchKey(endpoint, template, [backend.kind, backend.runKey(endpoint, template)]);
    for (const worker of runtime.workers.values()) {
      if (worker.launchKey !== key && !worker.stopping && !holdsJob(presence, worker.id)) this.#stopWorker(worker, 'release');
    }
    const workers = observeWorkers(runtime, presence, now, (worker, leftAt) => this.#reports.ready(runtime, worker, leftAt, now));
    const needsGpus = endpoint.computeType === 'GPU' && this.#pool !== undefined;
    if (needsGpus && this.#pool && endpoint.gpuCount > this.#pool.total) {
      this.#warnOnce(
        `gpus:${endpoint.id}`,
        { endpointId: endpoint.id, gpuCount: endpoint.gpuCount, gpus: this.#pool.total },
        'the endpoint wants more GPUs per worker than the machine has: its workers stay throttled',
      );
    }
    const elsewhere = await workersElsewhere(this.#slots, endpoint.id, presence, now);
    const decision = decideScaling({
      settings: endpoint,
      now,
      queued,
      runningJobs,
      workers: [...workers, ...elsewhere],
      startable: needsGpus && this.#pool ? Math.floor(this.#pool.freeCount / endpoint.gpuCount) : Number.POSITIVE_INFINITY,
      startBlocked: runtime.backoff.blocked(now),
    });
    if (decision.throttled !== runtime.throttled && decision.throttled > 0) {
      this.#log.warn({ endpointId: endpoint.id, throttled: decision.throttled, gpuCount: endpoint.gpuCount }, 'workers throttled: no GPU free');
      this.#reports.event(runtime, {
        endpointId: endpoint.id,
        kind: 'throttled',
        message: `${decision.throttled} wanted workers throttled: no GPU free (${endpoint.gpuCount} per worker)`,
      });
    }
    runtime.throttled = decision.throttled;
    for (const id of decision.stop) {
      const worker = runtime.workers.get(id);
      if (worker) this.#stopWorker(worker, 'idle');
    }
    // Nothing can start (an image missing): the endpoint says why, no worker is tried in a loop.
    const blocked =
      decision.start > 0 || runtime.startProblem !== undefined ? await cannotStartNow(this.#reports, runtime, endpoint.id, template, backend) : false;
    for (let i = 0; i < (blocked ? 0 : decision.start); i++) {
      const id = launchedWorkerId(this.#slots, endpoint.id, ++this.#seq); // a slot first: never more than workersMax across machines
      if ((await this.#slots.claim(endpoint.id, endpoint.workersMax, id, now)) === undefined) break;
      if (this.#closed) {
        // The launcher closed while the claim was under way: no launch after the drain begins.
        await this.#slots.release(endpoint.id, id);
        break;
      }
      this.#spawn({ id, endpoint, template, backend, runtime, now, needsGpus, desired: decision.desired, launchKey: key });
      if (!runtime.workers.has(id)) await this.#slots.release(endpoint.id, id);
    }
    // No worker could start for a while, and none is ready anywhere: the queued jobs fail with the reason, not at their ttl.
    const cannotStart = noteStartState(runtime, now);
    if (
      cannotStart !== undefined &&
      queued.length > 0 &&
      elsewhere.length === 0 &&
      jobsMustFail(runtime, now, this.settings.startFailureTimeoutMs, presence.values())
    ) {
      await failQueuedAndTell({ log: this.#log, reports: this.#reports }, runtime, jobs, cannotStart, now);
    }
    if (this.#deps.metrics) setWorkerGauge(this.#deps.metrics.harnessWorkers, endpoint.id, runtime, presence);
    return queued.length > 0 || runningJobs > 0 || runtime.workers.size > 0 || decision.desired > 0 || runtime.throttled > 0;
  }

  /** Start worker `id` (its slot claimed) unless the launcher closed meanwhile (worker-lifecycle.ts). */
  #spawn(request: WorkerStart): void {
    if (this.#target && !this.#closed) startWorker(this.#lifecycle, this.#target, request);
  }

  #stopWorker(worker: LaunchedWorker, reason: StopReason): void {
    stopWorker(this.#lifecycle, this.#runtimes.get(worker.endpointId), worker, reason);
  }

  // ------------------------------------------------------------------ helpers

  #runtime(endpointId: string): EndpointRuntime {
    let runtime = this.#runtimes.get(endpointId);
    if (!runtime) {
      runtime = newEndpointRuntime(this.settings.backoff);
      this.#runtimes.set(endpointId, runtime);
    }
    return runtime;
  }

  #warnOnce(key: string, fields: Record<string, unknown>, message: string): void {
    if (this.#warned.has(key)) return;
    this.#warned.add(key);
    this.#log.warn(fields, message);
  }
}
