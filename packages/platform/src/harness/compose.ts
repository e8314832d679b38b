/**
 * @module harness/compose
 * The one composition root of a harness process: the job store and the Harness on it,
 * the management store, the launcher (its worker slots and container engine) and the
 * HTTP server, each made once with what it needs, in order, and closed in the reverse
 * order. `serverless-worker harness`, `--serve-api` and the library's
 * `createHarnessServer` all start here; nothing is attached to a part after it is made.
 * Every part is made here (the launcher's in compose-launcher.ts, the server's in
 * server-parts.ts), with the defaults of the options' schemas; the server (server.ts)
 * registers its routes on the parts it is given and makes none, and imports nothing of
 * this file.
 *
 *     const app = await composeHarness({ store: 'memory', port: 0, launcher: { options, kind: 'process' } });
 *     app.server.url; app.launcher; app.harness;
 *     await app.close();   // the launcher's workers, the server, then what was opened here
 */
import { pino } from 'pino';
import { createMetrics, parseOrThrow, ServerlessWorkerError } from 'serverless-worker/internal';
import type { Harness, HarnessOptions } from 'serverless-worker/internal';
import { harnessForServer, type CreateHarnessServerOptions } from './server-store.js';
import { listenHarnessServer, type HarnessServer } from './server.js';
import { makeServerParts, type ServerParts } from './server-parts.js';
import { launcherTarget, openLauncher, runsProcesses, stopLeftoverProcesses, type LauncherPlan } from './compose-launcher.js';
// Types only: the launcher's code is loaded when a launcher is asked for (--serve-api and most library uses have none).
import type { Launcher, SlotClaims } from './launcher/index.js';
import { InMemoryManagementStore, type ManagementStore } from './management/index.js';
import { resolveWorkerApiSettings, type LivenessSettings } from './worker-api/index.js';
import { serveRecordedEndpoints } from './server-shared-endpoints.js';
import { HarnessServerOptionsSchema, resolveServerOptions, type HarnessServerConfig, type HarnessServerOptions } from './server-options.js';
import { checkBindAddress } from './http/bind-address.js';
import type { PostgresDatabase } from './postgres/database.js';

export type { LauncherPlan } from './compose-launcher.js';

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

/** Call `close` at most once; later calls wait for the first. */
function once(close: () => Promise<void>): () => Promise<void> {
  let closing: Promise<void> | undefined;
  return () => (closing ??= close());
}

/** Every part but the server, made in order over the harness and stores already open. */
interface Parts {
  readonly config: HarnessServerConfig;
  readonly liveness: LivenessSettings | false;
  readonly launched: { readonly launcher: Launcher; readonly slots: SlotClaims } | undefined;
  readonly server: ServerParts;
}

/**
 * The options checked (the server's and its worker API's: a bad one fails before a
 * launcher is opened), then the logger, the metrics registry, the management store the
 * launcher and the /v1 routes share, the launcher, and the server's parts. On a failure
 * the caller closes what it opened; the launcher is the last part that can fail.
 */
async function makeParts(options: HarnessServerOptions, plan: LauncherPlan | undefined, database: PostgresDatabase | undefined): Promise<Parts> {
  const config = resolveServerOptions(options);
  const { harness } = config;
  const { liveness } = resolveWorkerApiSettings({ ...config.workerApi, harness });
  const logger = config.logger ?? pino({ level: 'silent' });
  // Process metrics from the first /metrics scrape on: an idle harness nobody scrapes runs no event-loop monitor.
  const metrics = config.metrics ?? createMetrics({ defaultMetrics: 'from-first-read' });
  const managementStore: ManagementStore | undefined =
    config.management === false ? undefined : (config.management.store ?? new InMemoryManagementStore({ now: () => harness.clock.now() }));
  if (plan && managementStore === undefined)
    throw new ServerlessWorkerError('SW_INVALID_OPTIONS', 'A launcher needs the management API (/v1): leave management on');
  // On a shared store, the endpoints it records are served from the start.
  if (managementStore) await serveRecordedEndpoints(harness, managementStore);
  const launched = plan && managementStore ? await openLauncher(plan, { harness, store: managementStore, database, logger, metrics }) : undefined;
  const launchedWorkers = launched?.launcher ?? config.launchedWorkers;
  return { config, liveness, launched, server: makeServerParts(config, { logger, metrics, managementStore, launchedWorkers }) };
}

/** Open what the options name, make every part, listen, and start the launcher against the server. */
export async function composeHarness(options: ComposeHarnessOptions): Promise<ComposedHarness> {
  const { harnessOptions, launcher: plan, leftoverProcesses, ...serverInput } = options;
  // An unsafe bind is refused here, before anything is opened (a store, a database, a launcher); the server does not check again.
  const host = parseOrThrow(HarnessServerOptionsSchema.shape.host, serverInput.host, 'SW_INVALID_OPTIONS', 'harness server option host');
  checkBindAddress(host, serverInput.apiKey !== undefined, serverInput.allowUnauthenticatedNonLoopback === true);
  const { options: withHarness, owned, ownedManagement, ownedDatabase } = await harnessForServer(serverInput, harnessOptions);
  const closeOwned = once(async () => {
    await ownedManagement?.close();
    await owned?.close();
    await ownedDatabase?.close();
  });
  const parts = await makeParts(withHarness, plan, ownedDatabase).catch(async (error: unknown) => {
    await closeOwned();
    throw error;
  });
  const { config, launched, server: serverParts } = parts;
  let leftoversStopped: Promise<void> | undefined;
  const stopLauncher = once(async () => {
    await launched?.launcher.close();
    await launched?.slots.close();
    // Leftovers still stopping get their deadline: none outlives this harness either.
    await leftoversStopped;
  });
  const lifecycle = {
    closing: () => serverParts.stop(),
    closed: async () => {
      await stopLauncher();
      await closeOwned();
    },
  };
  const server = await listenHarnessServer(config, serverParts, lifecycle).catch(async (error: unknown) => {
    lifecycle.closing();
    await lifecycle.closed();
    throw error;
  });
  // Every setting the harness gives its workers reaches the ones it launches: its key and the heartbeat its liveness expects.
  launched?.launcher.start(launcherTarget(server.url, config.apiKey, parts.liveness));
  // Now that the server listens: a leftover SDK worker delivers its results here while it stops.
  const leftovers = leftoverProcesses ?? (runsProcesses(plan) ? { dataDir: plan?.dataDir } : undefined);
  if (leftovers) leftoversStopped = stopLeftoverProcesses(leftovers.dataDir ?? plan?.dataDir, plan?.options.shutdownDeadlineMs, serverParts.logger);
  const { harness, managementStore } = serverParts;
  return { harness, server, launcher: launched?.launcher, managementStore, stopLauncher, close: () => server.close() };
}

/** Build the harness's HTTP server on what the options name, listen, and answer once it accepts connections; its close() closes what it opened. */
export async function createHarnessServer(options: CreateHarnessServerOptions): Promise<HarnessServer> {
  return (await composeHarness(options)).server;
}
