/**
 * @module harness/compose-launcher
 * The launcher part of the composition root (compose.ts): the launcher a plan names,
 * with its worker slots (this process's own, or shared on PostgreSQL), its record of
 * worker processes and its container engine; where its workers reach the harness (the
 * worker API's liveness settings, defaults from their schema); and the stop of the
 * worker processes harnesses of this host that are gone left running. The launcher's
 * code is loaded only when a plan asks for it (--serve-api and most library uses have none).
 */
import type { Logger } from 'pino';
import type { Harness, Metrics } from 'serverless-worker/internal';
import type { LaunchBackend, Launcher, LauncherOptionsInput, LauncherTarget, ProcessRecords, SlotClaims } from './launcher/index.js';
import type { ManagementStore } from './management/index.js';
import type { LivenessSettings } from './worker-api/index.js';
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
export async function stopLeftoverProcesses(dataDir: string | undefined, deadlineMs: number | undefined, logger: Logger): Promise<void> {
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

/** The launcher the plan names, on its slots, record of processes and container engine (closed again if it cannot be made). */
export async function openLauncher(
  plan: LauncherPlan,
  parts: { harness: Harness; store: ManagementStore; database: PostgresDatabase | undefined; logger: Logger; metrics: Metrics },
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
  const processRecords = runsProcesses(plan) ? await openProcessRecords(plan) : undefined;
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
      metrics: parts.metrics,
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

/** Whether the plan runs worker processes (`images`): their record is kept, and leftovers are stopped by default. */
export function runsProcesses(plan: LauncherPlan | undefined): boolean {
  return plan !== undefined && Object.keys(plan.options.images ?? {}).length > 0;
}

/**
 * Where launched workers reach the harness: its address and key, and the heartbeat its
 * worker API's liveness expects (RUNPOD_PING_INTERVAL) and how long it lets a worker stay
 * silent (ping interval x missed pings), from the worker API's settings with their
 * schema's defaults applied; with liveness off, the launcher's own.
 */
export function launcherTarget(url: string, apiKey: string | undefined, liveness: LivenessSettings | false): LauncherTarget {
  return {
    url,
    ...(apiKey !== undefined ? { apiKey } : {}),
    ...(liveness !== false ? { pingIntervalMs: liveness.pingIntervalMs, silenceWindowMs: liveness.pingIntervalMs * liveness.missedPings } : {}),
  };
}
