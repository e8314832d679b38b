/**
 * @module harness/compose
 * The one composition root of a harness process: the job store and the Harness on it,
 * the management store, the launcher (its worker slots and container engine) and the
 * HTTP server, each made once with what it needs, in order, and closed in the reverse
 * order. `serverless-worker harness`, `--serve-api` and the library's
 * `createHarnessServer` all start here; nothing is attached to a part after it is made.
 *
 *     const app = await composeHarness({ store: 'memory', port: 0, launcher: { options, kind: 'process' } });
 *     app.server.url; app.launcher; app.harness;
 *     await app.close();   // the launcher's workers, the server, then what was opened here
 */
import type { Logger } from 'pino';
import { type Harness, type HarnessOptions, parseOrThrow, ServerlessWorkerError } from 'serverless-worker/internal';
import { harnessForServer, type CreateHarnessServerOptions } from './server-store.js';
import { listenHarnessServer, type HarnessServer } from './server.js';
// Types only: the launcher's code is loaded when a launcher is asked for (--serve-api and most library uses have none).
import type { LaunchBackend, Launcher, LauncherOptionsInput, ProcessRecords, SlotClaims } from './launcher/index.js';
import { InMemoryManagementStore, type ManagementStore } from './management/index.js';
import { HarnessServerOptionsSchema, type WorkerApiPassThrough } from './server-options.js';
import { checkBindAddress } from './http/bind-address.js';
import type { PostgresDatabase } from './postgres/database.js';

/** The launcher a composed harness runs: which workers, where their slots live, and their container engine. */
export interface LauncherPlan {
  readonly options: LauncherOptionsInput;
  /** `process`: only the `images` commands; `docker`: every template's image as containers too. */
  readonly kind: 'process' | 'docker';
  /** This machine's name on the slots it claims; default `<hostname>-<pid>`. */
  readonly machineId?: string | undefined;
  /** With `docker`: the engine (`unix://…`, `tcp://…`); default DOCKER_HOST, else the local socket. */
  readonly dockerHost?: string | undefined;
  /** The harness's data folder (network volumes of containers, the record of worker processes); default ~/.serverless-worker/harness. */
  readonly dataDir?: string | undefined;
}

export type ComposeHarnessOptions = CreateHarnessServerOptions & {
  /** For a harness made here (the `store` form): its settings other than the store; default none. */
  readonly harnessOptions?: Omit<HarnessOptions, 'store'> | undefined;
  /** Run workers of the templates' images; default none. Needs the management API. */
  readonly launcher?: LauncherPlan | undefined;
  /**
   * Stop the worker processes that harnesses of this host, now gone, launched and left
   * running (recorded in `<dataDir>/launched-processes/`), once the server listens: with
   * or without a launcher of its own (`serverless-worker harness` always asks). Default
   * the launcher plan's data folder when it runs `images`, else none.
   */
  readonly leftoverProcesses?: { readonly dataDir?: string | undefined } | undefined;
};

export interface ComposedHarness {
  readonly harness: Harness;
  readonly server: HarnessServer;
  readonly launcher: Launcher | undefined;
  /** The management store the /v1 routes use, when they are on. */
  readonly managementStore: ManagementStore | undefined;
  /** Stop the launcher's workers (SIGTERM, their shutdown deadline) and free its slots; close() does it too. Once. */
  stopLauncher(): Promise<void>;
  /** Stop the launcher's workers (they drain), then the server, then what was opened here. */
  close(): Promise<void>;
}

/** The heartbeat interval the worker API's liveness expects (RUNPOD_PING_INTERVAL of launched workers); undefined: the default. */
export function workerPingIntervalMs(workerApi: WorkerApiPassThrough | undefined): number | undefined {
  const liveness = workerApi?.liveness;
  return liveness === false || liveness === undefined ? undefined : liveness.pingIntervalMs;
}

/** How long the worker API's liveness lets a worker stay silent (ping interval x missed pings, their defaults 10 000 and 3), ms; undefined: liveness off. */
export function workerSilenceWindowMs(workerApi: WorkerApiPassThrough | undefined): number | undefined {
  const liveness = workerApi?.liveness ?? {};
  return liveness === false ? undefined : (liveness.pingIntervalMs ?? 10_000) * (liveness.missedPings ?? 3);
}

/** Call `close` at most once; later calls wait for the first. */
function once(close: () => Promise<void>): () => Promise<void> {
  let closing: Promise<void> | undefined;
  return () => (closing ??= close());
}

/** The launcher's worker slots: this process's own, or on PostgreSQL shared by every machine on the database. */
async function openSlotClaims(database: PostgresDatabase | undefined, machineId: string): Promise<SlotClaims> {
  const { LocalSlotClaims } = await import('./launcher/index.js');
  if (database === undefined) return new LocalSlotClaims(machineId);
  const { PostgresSlotClaims } = await import('./launcher/postgres-slot-claims.js');
  return new PostgresSlotClaims(database, { machineId });
}

/** The launcher's record of its worker processes. */
async function openProcessRecords(plan: LauncherPlan): Promise<ProcessRecords> {
  const { ProcessRecords } = await import('./launcher/process-records.js');
  const { defaultHarnessDataDir } = await import('./launcher/launcher-data-dir.js');
  return new ProcessRecords(plan.dataDir ?? defaultHarnessDataDir());
}

/**
 * Stop the worker processes harnesses of this host that are gone left in `dataDir`
 * (SIGKILLed: they could not stop them): SIGTERM, SIGKILL after `deadlineMs`. Run once
 * the server listens, so that an SDK worker among them, which kept its finished results
 * for a harness on the same address (local/harness-gone.ts in the SDK), delivers them
 * to this one while it drains. Never rejects: a failure is logged.
 */
async function stopLeftoverProcesses(dataDir: string | undefined, deadlineMs: number | undefined, logger: Logger): Promise<void> {
  try {
    const { ProcessRecords } = await import('./launcher/process-records.js');
    const { defaultHarnessDataDir } = await import('./launcher/launcher-data-dir.js');
    const { LauncherOptionsSchema } = await import('./launcher/launcher-options.js');
    const records = new ProcessRecords(dataDir ?? defaultHarnessDataDir());
    // The launcher's own default when its options name none: the leftovers get the drain a worker of this harness would.
    const deadline = deadlineMs ?? LauncherOptionsSchema.shape.shutdownDeadlineMs.parse(undefined);
    const found = records.leftovers();
    if (found.length > 0)
      logger.warn(
        { leftovers: found, folder: records.folder, shutdownDeadlineMs: deadline },
        `launcher: ${found.length} worker process(es) a harness that is gone left running: SIGTERM, SIGKILL after ${deadline} ms`,
      );
    // Also with none running: the records of harnesses that are gone are removed.
    const stopped = await records.stopLeftovers(deadline);
    if (stopped.length > 0) {
      logger.warn(
        { leftovers: stopped, folder: records.folder },
        `launcher: stopped ${stopped.length} worker process(es) a harness that is gone left running: ${stopped.map((worker) => `${worker.workerId} (pid ${worker.pid}${worker.killed ? ', SIGKILL' : ''})`).join(', ')}`,
      );
    }
  } catch (error) {
    logger.error({ err: error }, 'launcher: could not stop the worker processes a harness that is gone left running');
  }
}

async function openLauncher(
  plan: LauncherPlan,
  parts: { harness: Harness; store: ManagementStore; database: PostgresDatabase | undefined; logger: Logger; metrics: CreateHarnessServerOptions['metrics'] },
): Promise<{ launcher: Launcher; slots: SlotClaims }> {
  const { Launcher, defaultMachineId } = await import('./launcher/index.js');
  const { defaultHarnessDataDir } = await import('./launcher/launcher-data-dir.js');
  const slots = await openSlotClaims(parts.database, plan.machineId ?? defaultMachineId());
  parts.logger.info(
    { machineId: slots.machineId, shared: slots.shared },
    `launcher machine id: ${slots.machineId}${slots.shared ? ' (worker slots shared with every harness on the database)' : ''}`,
  );
  let containers: LaunchBackend | undefined;
  // Worker processes are recorded in the data folder (those a crashed harness of this host left are stopped once the server listens).
  const processRecords = Object.keys(plan.options.images ?? {}).length > 0 ? await openProcessRecords(plan) : undefined;
  try {
    if (plan.kind === 'docker') {
      // The engine is asked at start, so a wrong --docker-host fails here, not at the first job.
      const { DockerBackend, parseDockerHost } = await import('./launcher/docker/index.js');
      containers = await DockerBackend.open({
        host: parseDockerHost(plan.dockerHost),
        dataDir: plan.dataDir ?? defaultHarnessDataDir(),
        machineId: slots.machineId,
        logger: parts.logger,
      });
    }
    const launcher = new Launcher(plan.options, {
      harness: parts.harness,
      store: parts.store,
      logger: parts.logger,
      ...(parts.metrics ? { metrics: parts.metrics } : {}),
      slots,
      ...(containers ? { containers } : {}),
      ...(processRecords ? { processRecords } : {}),
    });
    return { launcher, slots };
  } catch (error) {
    await containers?.close();
    await slots.close();
    throw error;
  }
}

/** Open what the options name, wire it, listen, and start the launcher against the server. */
export async function composeHarness(options: ComposeHarnessOptions): Promise<ComposedHarness> {
  const { harnessOptions, launcher: plan, leftoverProcesses, ...serverInput } = options;
  // An unsafe bind is refused here, before anything is opened (a store, a database, a launcher); the server does not check again.
  const host = parseOrThrow(HarnessServerOptionsSchema.shape.host, serverInput.host, 'SW_INVALID_OPTIONS', 'harness server option host');
  checkBindAddress(host, serverInput.apiKey !== undefined, serverInput.allowUnauthenticatedNonLoopback === true);
  const { options: withHarness, owned, ownedManagement, ownedDatabase } = await harnessForServer(serverInput, harnessOptions);
  const { harness } = withHarness;
  const closeOwned = once(async () => {
    await ownedManagement?.close();
    await owned?.close();
    await ownedDatabase?.close();
  });
  const logger = withHarness.logger;
  let launched: { launcher: Launcher; slots: SlotClaims } | undefined;
  let managementStore: ManagementStore | undefined;
  try {
    // The launcher and the /v1 routes share one management store.
    if (withHarness.management !== false) managementStore = withHarness.management?.store ?? new InMemoryManagementStore({ now: () => harness.clock.now() });
    if (plan) {
      if (managementStore === undefined)
        throw new ServerlessWorkerError('SW_INVALID_OPTIONS', 'A launcher needs the management API (/v1): leave management on');
      launched = await openLauncher(plan, {
        harness,
        store: managementStore,
        database: ownedDatabase,
        logger: logger ?? (await import('pino')).pino({ level: 'silent' }),
        metrics: withHarness.metrics,
      });
    }
  } catch (error) {
    await closeOwned();
    throw error;
  }
  let leftoversStopped: Promise<void> | undefined;
  const stopLauncher = once(async () => {
    await launched?.launcher.close();
    await launched?.slots.close();
    // Leftovers still stopping get their deadline: none outlives this harness either.
    await leftoversStopped;
  });
  const server = await listenHarnessServer(
    {
      ...withHarness,
      ...(managementStore && withHarness.management !== false ? { management: { ...withHarness.management, store: managementStore } } : {}),
      ...(launched ? { launchedWorkers: launched.launcher } : {}),
    },
    async () => {
      await stopLauncher();
      await closeOwned();
    },
  ).catch(async (error: unknown) => {
    await stopLauncher();
    await closeOwned();
    throw error;
  });
  // Every setting the harness gives its workers reaches the ones it launches: its key and the heartbeat interval its liveness expects.
  const pingIntervalMs = workerPingIntervalMs(withHarness.workerApi);
  const silenceWindowMs = workerSilenceWindowMs(withHarness.workerApi);
  launched?.launcher.start({
    url: server.url,
    ...(withHarness.apiKey !== undefined ? { apiKey: withHarness.apiKey } : {}),
    ...(pingIntervalMs !== undefined ? { pingIntervalMs } : {}),
    ...(silenceWindowMs !== undefined ? { silenceWindowMs } : {}),
  });
  // Now that the server listens: a leftover SDK worker delivers its results here while it stops.
  const leftovers = leftoverProcesses ?? (plan && Object.keys(plan.options.images ?? {}).length > 0 ? { dataDir: plan.dataDir } : undefined);
  if (leftovers)
    leftoversStopped = stopLeftoverProcesses(
      leftovers.dataDir ?? plan?.dataDir,
      plan?.options.shutdownDeadlineMs,
      logger ?? (await import('pino')).pino({ level: 'silent' }),
    );
  return { harness, server, launcher: launched?.launcher, managementStore, stopLauncher, close: () => server.close() };
}
