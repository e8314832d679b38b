/**
 * @module bench/lib/soak-cluster
 * What bench/soak.ts runs and breaks: an embedded PostgreSQL server (test/postgres/
 * embedded-server.ts), two `serverless-worker harness` processes on its database (the
 * real CLI through test/kit's startHarnessProcess, each on a port of its own kept across
 * restarts, each with its own --data-dir), whose process launchers run
 * bench/children/soak-worker.ts for the soak's endpoint. The faults: SIGKILL a harness
 * (restarted on the same port and data folder), SIGKILL one launched worker (the
 * launcher replaces it), stop PostgreSQL and start it again.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ChildList, REPO_ROOT } from '../../test/child-process.js';
import { startHarnessProcess, type HarnessProcess } from '../../test/kit/harness.js';
import { fetchOkJson } from '../../test/kit/http.js';
import { freePort } from '../../test/kit/ports.js';
import { startEmbeddedServer, type EmbeddedServer } from '../../test/postgres/embedded-server.js';
import { processTree } from './proc.js';

const WORKER = join(REPO_ROOT, 'bench/children/soak-worker.ts');
const IMAGE = 'soak/worker:1';

export interface SoakHarness {
  readonly name: string;
  readonly port: number;
  readonly dataDir: string;
  process: HarnessProcess | undefined;
  /** Times it ended without the soak killing it (then it is started again, as a supervisor would): pid, when, exit code and last log lines. */
  readonly unexpectedExits: Array<{ pid: number; at: number; how: string }>;
}

export interface SoakCluster {
  readonly postgres: EmbeddedServer;
  readonly harnesses: readonly SoakHarness[];
  readonly endpointId: string;
  readonly runsFile: string;
  /** Base URLs of the harnesses that run now. */
  liveUrls(): string[];
  /** SIGKILL one harness, wait `downMs`, start it again on its port and data folder; false when it was not running (exited by itself, being started again). */
  killHarness(harness: SoakHarness, downMs: number): Promise<boolean>;
  /** The pids of the launched worker processes now running (under either harness). */
  workerPids(): number[];
  /** Stop PostgreSQL for `downMs` and start it again (same port, same data). */
  restartPostgres(downMs: number): Promise<void>;
  close(): Promise<void>;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Set when the soak closes the cluster: a harness that exits then is not started again. */
let closing = false;

/** Start `harness`; one that exits by itself later is recorded and started again after a second. */
async function launch(children: ChildList, harness: SoakHarness, store: string, timeoutMs: number, pingIntervalMs: number): Promise<HarnessProcess> {
  const started = await startHarnessProcess(
    children,
    [
      '--store',
      store,
      '--no-rate-limit',
      '--gpus',
      'none',
      '--data-dir',
      harness.dataDir,
      '--ping-interval-ms',
      String(pingIntervalMs),
      '--image',
      `${IMAGE}="${process.execPath}" --import tsx "${WORKER}"`,
    ],
    { port: harness.port, timeoutMs, env: { LOG_LEVEL: 'warn' } },
  );
  harness.process = started;
  void started.child.then(async (result) => {
    if (harness.process !== started) return; // killed by the soak: a new one replaced it
    harness.process = undefined;
    harness.unexpectedExits.push({
      pid: started.child.pid ?? 0,
      at: Date.now(),
      how: `exit ${String(result.exitCode)} signal ${String(result.signal)}: ${started.stderr().slice(-1_500)}`,
    });
    // A start may fail while PostgreSQL is down: try again until one runs.
    while (!closing && harness.process === undefined) {
      await sleep(1_000);
      if (closing || harness.process !== undefined) return;
      await launch(children, harness, store, timeoutMs, pingIntervalMs).catch(() => undefined);
    }
  });
  return started;
}

/**
 * Start PostgreSQL, the two harnesses and the soak's endpoint (template image
 * soak/worker:1, `workersMin`..`workersMax` workers of SOAK_CONCURRENCY jobs each).
 * `lifetimeMs` bounds every child (the soak's whole run).
 */
export async function startSoakCluster(options: {
  workersMin: number;
  workersMax: number;
  concurrency: number;
  lifetimeMs: number;
  /** The harnesses' --ping-interval-ms: a worker silent 3 of them is gone and its jobs requeued. */
  pingIntervalMs: number;
}): Promise<SoakCluster> {
  const postgres = await startEmbeddedServer();
  const children = new ChildList();
  const scratch = mkdtempSync(join(tmpdir(), 'sw-soak-'));
  const runsFile = join(scratch, 'runs.jsonl');
  const harnesses: SoakHarness[] = [];
  for (const name of ['a', 'b']) {
    harnesses.push({ name, port: await freePort(), dataDir: mkdtempSync(join(scratch, `data-${name}-`)), process: undefined, unexpectedExits: [] });
  }
  // One after the other: the first applies the migrations.
  for (const harness of harnesses) await launch(children, harness, postgres.url, options.lifetimeMs, options.pingIntervalMs);
  const first = harnesses[0]?.process;
  if (!first) throw new Error('harness a did not start');
  const template = await fetchOkJson<{ id: string }>(`${first.url}/v1/templates`, 'POST', {
    name: 'soak',
    imageName: IMAGE,
    category: 'CPU',
    env: { SOAK_RUNS_FILE: runsFile, SOAK_CONCURRENCY: String(options.concurrency), LOG_LEVEL: 'warn' },
  });
  const endpoint = await fetchOkJson<{ id: string }>(`${first.url}/v1/endpoints`, 'POST', {
    name: 'soak',
    templateId: template.id,
    workersMin: options.workersMin,
    workersMax: options.workersMax,
    idleTimeout: 60,
    scalerType: 'QUEUE_DELAY',
    scalerValue: 4,
  });

  return {
    postgres,
    harnesses,
    endpointId: endpoint.id,
    runsFile,
    liveUrls: () => harnesses.flatMap((harness) => (harness.process ? [harness.process.url] : [])),
    async killHarness(harness, downMs) {
      const running = harness.process;
      if (!running) return false; // it exited by itself and is being started again
      harness.process = undefined;
      running.child.kill('SIGKILL');
      await running.child;
      await sleep(downMs);
      while (!closing && harness.process === undefined) {
        await launch(children, harness, postgres.url, options.lifetimeMs, options.pingIntervalMs).catch(() => sleep(1_000));
      }
      return true;
    },
    workerPids() {
      const pids: number[] = [];
      for (const harness of harnesses) {
        const pid = harness.process?.child.pid;
        if (pid === undefined) continue;
        for (const member of processTree(pid).slice(1)) {
          try {
            const command = readFileSync(`/proc/${member}/cmdline`, 'utf8').split('\0');
            // The node process itself, not the /bin/sh -c that started it.
            if (command[0] === process.execPath && command.includes(WORKER)) pids.push(member);
          } catch {
            // Ended meanwhile.
          }
        }
      }
      return pids;
    },
    async restartPostgres(downMs) {
      await postgres.pause();
      await sleep(downMs);
      await postgres.resume();
    },
    async close() {
      closing = true;
      for (const harness of harnesses) {
        const running = harness.process;
        harness.process = undefined;
        if (running) {
          running.child.kill('SIGTERM');
          await Promise.race([running.child, sleep(15_000)]);
        }
      }
      await children.killAll();
      await postgres.stop();
    },
  };
}
