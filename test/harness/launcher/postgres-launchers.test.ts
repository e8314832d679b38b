/**
 * Two harnesses on one PostgreSQL database, each with its own Launcher (two "machines",
 * in this test process), scaling one endpoint with workersMax 2 through the shared
 * worker slots, with real worker processes (the platform fixture worker over HTTP on
 * loopback, each joined to its own machine's harness). Under a burst submitted through
 * both: never more than 2 workers across the two machines, every job completes exactly
 * once, and the workers are gone after idleTimeout. Then a machine that goes away
 * without releasing its slot (a crash: its PostgreSQL sessions end) leaves it to the
 * other machine at once, within its lease. And a machine without GPUs starts no worker of a GPU endpoint: a machine
 * with GPUs that joins takes the slot and runs the worker on its own GPU, and the
 * dashboard says so; one told `gpus: 'none'` runs it without device assignment, as the
 * memory store does. Figures are printed.
 */
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { Harness } from '../../../src/harness/index.js';
import { createHarnessServer, type HarnessServer } from '../../../packages/platform/src/harness/server-api.js';
import { Launcher } from '../../../packages/platform/src/harness/launcher/index.js';
import { PostgresSlotClaims } from '../../../packages/platform/src/harness/launcher/postgres-slot-claims.js';
import type { Endpoint, Template } from '../../../packages/platform/src/harness/management/index.js';
import { PostgresManagementStore } from '../../../packages/platform/src/harness/management/store/postgres-management-store.js';
import { PostgresJobStore } from '../../../packages/platform/src/harness/store/postgres/postgres-job-store.js';
import { openHarnessDatabase } from '../../../packages/platform/src/harness/harness-database.js';
import { createTestDatabase, type TestDatabase } from '../../postgres/test-database.js';
import { REPO_ROOT } from '../../platform/worker-process.js';
import { postJson as post, waitFor } from '../../kit/index.js';
import { FIXTURE_COMMAND, TEST_IMAGE, startLauncherHarness } from './launcher-setup.js';

interface Machine {
  readonly id: string;
  readonly server: HarnessServer;
  readonly launcher: Launcher;
  readonly slots: PostgresSlotClaims;
  close(): Promise<void>;
}

async function startMachine(url: string, id: string, gpus?: string[] | 'none'): Promise<Machine> {
  const logger = pino({ level: 'silent' });
  // One database handle per machine (process), shared by its three stores, as the CLI opens it.
  const database = await openHarnessDatabase(url, { poolSize: 4 });
  const management = new PostgresManagementStore(database);
  // Only endpoints that exist (made through /v1 on either machine) are served, as with --endpoint.
  const harness = new Harness({ store: await PostgresJobStore.open(database), autoCreateEndpoints: false });
  const slots = new PostgresSlotClaims(database, { machineId: id, leaseMs: 3_000 });
  const launcher = new Launcher(
    {
      images: { [TEST_IMAGE]: { command: FIXTURE_COMMAND, cwd: REPO_ROOT } },
      tickMs: 100,
      shutdownDeadlineMs: 5_000,
      ...(gpus === 'none' ? { gpus } : gpus ? { gpus: { vendor: 'nvidia' as const, devices: gpus } } : {}),
    },
    { harness, store: management, logger, slots },
  );
  const server = await createHarnessServer({ harness, port: 0, rateLimits: false, management: { store: management }, logger, launchedWorkers: launcher });
  launcher.start({ url: server.url, pingIntervalMs: 1_000 });
  let closed = false;
  return {
    id,
    server,
    launcher,
    slots,
    async close() {
      if (closed) return;
      closed = true;
      await launcher.close();
      await slots.close();
      await server.close();
      await harness.close();
      await management.close();
      await database.close();
    },
  };
}

/** The fixture's "started" events in a machine's worker logs: one per run of a job. */
function runsOf(machine: Machine, endpointId: string): string[] {
  return machine.launcher
    .logs(endpointId)
    .filter((entry) => entry.stream === 'stdout' && entry.line.startsWith('{'))
    .map((entry) => JSON.parse(entry.line) as { event: string; jobId?: string })
    .filter((event) => event.event === 'started')
    .map((event) => event.jobId ?? '');
}

let database: TestDatabase | undefined;
const machines: Machine[] = [];
afterEach(async () => {
  for (const machine of machines.splice(0)) await machine.close();
  await database?.drop();
  database = undefined;
}, 120_000);

describe('launchers on several machines (shared PostgreSQL slots)', () => {
  it('two machines, workersMax 2, a burst through both: at most 2 workers in all, every job once, the slot of a crashed machine goes to the other at once', async () => {
    database = await createTestDatabase();
    const a = await startMachine(database.url, 'machine-a');
    machines.push(a);
    const b = await startMachine(database.url, 'machine-b');
    machines.push(b);
    const template = await post<Template>(`${a.server.url}/v1/templates`, {
      name: 'shared-worker',
      imageName: TEST_IMAGE,
      isServerless: true,
      category: 'CPU',
      env: { LOG_LEVEL: 'warn' },
    });
    const endpoint = await post<Endpoint>(`${a.server.url}/v1/endpoints`, {
      templateId: template.id,
      workersMin: 0,
      workersMax: 2,
      idleTimeout: 2,
      scalerType: 'REQUEST_COUNT',
      scalerValue: 1,
    });

    let most = 0;
    const perMachine = new Map<string, Set<string>>([
      [a.id, new Set()],
      [b.id, new Set()],
    ]);
    const sampler = setInterval(() => {
      void Promise.all([a.launcher.pods(), b.launcher.pods()]).then(([onA, onB]) => {
        most = Math.max(most, onA.length + onB.length);
        for (const pod of onA) perMachine.get(a.id)?.add(pod.id);
        for (const pod of onB) perMachine.get(b.id)?.add(pod.id);
      });
    }, 50);
    try {
      const started = Date.now();
      const ids = await Promise.all(
        Array.from({ length: 12 }, (_, index) =>
          post<{ id: string }>(`${(index % 2 === 0 ? a : b).server.url}/v2/${endpoint.id}/run`, { input: { mode: 'sleep', ms: 500, tag: index } }),
        ),
      );
      const jobIds = ids.map((answer) => answer.id);
      await waitFor(
        async () => {
          const statuses = await Promise.all(
            jobIds.map(async (id) => ((await (await fetch(`${b.server.url}/v2/${endpoint.id}/status/${id}`)).json()) as { status: string }).status),
          );
          return statuses.every((status) => status === 'COMPLETED');
        },
        'all 12 jobs COMPLETED',
        180_000,
        250,
      );
      const doneMs = Date.now() - started;
      await waitFor(async () => (await a.launcher.pods()).length + (await b.launcher.pods()).length === 0, 'every worker gone after idleTimeout', 60_000, 50);

      const runs = [...runsOf(a, endpoint.id), ...runsOf(b, endpoint.id)];
      expect([...runs].sort()).toEqual([...jobIds].sort());
      expect(most).toBeLessThanOrEqual(2);
      expect(most).toBeGreaterThanOrEqual(1);
      const started1 = [...(perMachine.get(a.id) ?? [])];
      const started2 = [...(perMachine.get(b.id) ?? [])];
      // Worker ids carry their machine, so no two machines ever start the same id.
      for (const id of started1) expect(id).toContain('machine-a');
      for (const id of started2) expect(id).toContain('machine-b');
      console.log(
        `[two machines, workersMax 2] 12 jobs x 500 ms through both harnesses: done in ${doneMs} ms; ` +
          `workers started on machine-a ${started1.length}, on machine-b ${started2.length}; most at once in all ${most}`,
      );
    } finally {
      clearInterval(sampler);
    }

    // A machine that holds a slot and goes away without releasing it (a crash): its
    // PostgreSQL sessions end, and the other machine may take the slot at once, within its
    // lease (3 s here; a machine still running that stops renewing keeps it until the lease
    // lapses: slot-claims.test.ts). A worker's slot is released just after it is gone (not
    // awaited by the stop), so wait until neither machine sees a slot of the other before claiming one.
    await waitFor(
      async () => (await a.slots.heldElsewhere(endpoint.id, Date.now())).length + (await b.slots.heldElsewhere(endpoint.id, Date.now())).length === 0,
      'every worker slot released',
      30_000,
      50,
    );
    const heldAt = Date.now();
    const held = await a.slots.claim(endpoint.id, 2, `${endpoint.id}-machine-a-held`, heldAt);
    expect(held).toBe(0);
    expect(await b.slots.heldElsewhere(endpoint.id, heldAt)).toEqual([`${endpoint.id}-machine-a-held`]);
    expect(await b.slots.claim(endpoint.id, 1, `${endpoint.id}-machine-b-x`, heldAt)).toBeUndefined();
    await a.close();
    // The server ends a's sessions just after their sockets close; the times stay those of the claim.
    await waitFor(async () => (await b.slots.heldElsewhere(endpoint.id, heldAt)).length === 0, "the crashed machine's slot freed", 20_000, 20);
    expect(await b.slots.claim(endpoint.id, 1, `${endpoint.id}-machine-b-x`, heldAt)).toBe(0);
  }, 300_000);

  it('a machine without GPUs leaves a GPU endpoint to a machine with GPUs, which starts its worker on its own GPU', async () => {
    database = await createTestDatabase();
    const cpuOnly = await startMachine(database.url, 'cpu-only');
    machines.push(cpuOnly);
    const template = await post<Template>(`${cpuOnly.server.url}/v1/templates`, {
      name: 'gpu-worker',
      imageName: TEST_IMAGE,
      isServerless: true,
      env: { LOG_LEVEL: 'warn' },
    });
    const endpoint = await post<Endpoint>(`${cpuOnly.server.url}/v1/endpoints`, {
      templateId: template.id,
      gpuTypeIds: ['NVIDIA GeForce RTX 4090'],
      gpuCount: 1,
      workersMin: 1,
      workersMax: 1,
    });
    // Fifteen scaling rounds with workersMin 1: the machine without GPUs starts nothing.
    const roundsBefore = cpuOnly.launcher.rounds;
    await waitFor(() => cpuOnly.launcher.rounds >= roundsBefore + 15, 'fifteen scaling rounds on the machine without GPUs', 60_000);
    expect(await cpuOnly.launcher.pods()).toEqual([]);
    const gpuBox = await startMachine(database.url, 'gpu-box', ['7']);
    machines.push(gpuBox);
    const pods = await waitFor(
      async () => {
        const list = await gpuBox.launcher.pods();
        return list.length > 0 ? list : undefined;
      },
      'the GPU machine starts the warm worker',
      60_000,
      50,
    );
    expect(pods.map((pod) => pod.gpu?.count)).toEqual([1]);
    expect(pods[0]?.id).toContain('gpu-box');
    expect(await cpuOnly.launcher.pods()).toEqual([]);
    expect(await cpuOnly.slots.heldElsewhere(endpoint.id, Date.now())).toEqual([pods[0]?.id]);
  }, 120_000);

  it("gpus: 'none' runs a GPU endpoint's worker here without device assignment, on PostgreSQL as on the memory store; with no GPU known the dashboard says why nothing starts", async () => {
    database = await createTestDatabase();
    const gpuEndpoint = { gpuTypeIds: ['NVIDIA GeForce RTX 4090'], gpuCount: 1, workersMin: 0, workersMax: 1 };
    const template = { name: 'gpu-worker-none', imageName: TEST_IMAGE, isServerless: true, env: { LOG_LEVEL: 'warn' } };

    // The memory store: a harness alone.
    const alone = await startLauncherHarness({ gpus: 'none' });
    try {
      const endpoint = await alone.createEndpoint(gpuEndpoint, { category: 'NVIDIA' });
      expect(endpoint.computeType).toBe('GPU');
      const job = await alone.run(endpoint.id, { tag: 'memory' });
      await waitFor(async () => (await alone.status(endpoint.id, job)).status === 'COMPLETED', 'the GPU job completed on the memory store', 90_000, 100);
    } finally {
      await alone.close();
    }

    // PostgreSQL, told none: the same.
    const toldNone = await startMachine(database.url, 'told-none', 'none');
    machines.push(toldNone);
    const t = await post<Template>(`${toldNone.server.url}/v1/templates`, template);
    const endpoint = await post<Endpoint>(`${toldNone.server.url}/v1/endpoints`, { templateId: t.id, ...gpuEndpoint });
    expect(endpoint.computeType).toBe('GPU');
    const job = await post<{ id: string }>(`${toldNone.server.url}/v2/${endpoint.id}/run`, { input: { tag: 'postgres' } });
    await waitFor(
      async () => ((await (await fetch(`${toldNone.server.url}/v2/${endpoint.id}/status/${job.id}`)).json()) as { status: string }).status === 'COMPLETED',
      'the GPU job completed on PostgreSQL with gpus none',
      90_000,
      100,
    );
    expect((await toldNone.launcher.pods()).map((pod) => pod.gpu)).toEqual([null]);
    await toldNone.close();

    // PostgreSQL with no GPU known: nothing starts here, and the dashboard says why (not "give the launcher its image").
    const noneKnown = await startMachine(database.url, 'none-known');
    machines.push(noneKnown);
    // An endpoint of its own that no worker ever served: the closed machine's worker stays in the
    // shared store as idle on the first one until its silence window passes.
    const waitingEndpoint = await post<Endpoint>(`${noneKnown.server.url}/v1/endpoints`, { templateId: t.id, ...gpuEndpoint, name: 'gpu-waits' });
    const waiting = await post<{ id: string }>(`${noneKnown.server.url}/v2/${waitingEndpoint.id}/run`, { input: { tag: 'waits' } });
    const reason = await waitFor(
      async () => {
        const overview = (await (await fetch(`${noneKnown.server.url}/ui/api/overview`)).json()) as {
          endpoints: Array<{ id: string; health: { reason: string } }>;
        };
        const row = overview.endpoints.find((candidate) => candidate.id === waitingEndpoint.id);
        return row?.health.reason.includes('no worker:') ? row.health.reason : undefined;
      },
      'the dashboard names why no worker starts',
      30_000,
      100,
    );
    expect(reason).toContain('GPU endpoint: no GPUs known on this harness (none-known)');
    expect(reason).toContain('--gpus none');
    expect(reason).not.toContain('give the launcher its image');
    expect(await noneKnown.launcher.pods()).toEqual([]);
    expect(waiting.id).toBeTruthy();
  }, 240_000);
});
