/**
 * A `serverless-worker harness` on PostgreSQL SIGKILLed while it holds every worker slot
 * of an endpoint (real child processes, real launched workers, the run's embedded
 * PostgreSQL): the harness started after it, another machine id, takes the slots at once
 * and runs the endpoint's jobs, without waiting for the killed harness's leases, which the
 * test pushes an hour out so that only the end of its PostgreSQL session can free them.
 */
import { afterEach, expect, it } from 'vitest';
import { ChildList } from '../child-process.js';
import { call, fetchOkJson, freePort, waitFor } from '../kit/index.js';
import { LAUNCHER_WORKER_COMMAND } from '../harness/launcher/launcher-setup.js';
import { tempDir } from '../gpu/fake-tools.js';
import { createTestDatabase, type TestDatabase } from '../postgres/test-database.js';
import { startHarness } from './support/harness-processes.js';

const children = new ChildList();
let database: TestDatabase | undefined;

afterEach(async () => {
  await children.killAll();
  await database?.drop();
  database = undefined;
});

it("a harness SIGKILLed holding every slot: the next one takes them at once, not after the killed one's leases", async () => {
  database = await createTestDatabase();
  const admin = await database.connect(1);
  const port = await freePort();
  // One data folder: the next harness stops the workers the killed one left running, as on one host.
  const args = ['--gpus', 'none', '--data-dir', tempDir(), '--ping-interval-ms', '1000', '--image', `test/worker:1=${LAUNCHER_WORKER_COMMAND}`];
  const killed = await startHarness(children, database.url, port, args);
  const template = await fetchOkJson<{ id: string }>(`${killed.url}/v1/templates`, 'POST', {
    name: 't-takeover',
    imageName: 'test/worker:1',
    category: 'CPU',
    env: { LOG_LEVEL: 'warn' },
  });
  const endpoint = (await fetchOkJson<{ id: string }>(`${killed.url}/v1/endpoints`, 'POST', { templateId: template.id, workersMin: 2, workersMax: 2 })).id;
  const holders = async (): Promise<string[]> =>
    (await admin.sql<{ machine_id: string }[]>`SELECT machine_id FROM sw_launcher_slots WHERE endpoint_id = ${endpoint} ORDER BY slot`).map(
      (row) => row.machine_id,
    );
  await waitFor(async () => (await holders()).length === 2, 'the first harness holds both slots', 120_000, 50);
  const [killedMachine] = await holders();

  killed.child.kill('SIGKILL');
  await killed.child.catch(() => undefined);
  // Its leases an hour out: a lapse cannot free the slots within this test.
  await admin.sql`UPDATE sw_launcher_slots SET lease_expires_at = lease_expires_at + 3600000 WHERE endpoint_id = ${endpoint}`;

  const next = await startHarness(children, database.url, port, args);
  const job = await call('POST', `${next.url}/v2/${endpoint}/run`, { body: { input: { ms: 10, tag: 'after-the-kill' } } });
  expect(job.status).toBe(200);
  const jobId = (job.json as { id: string }).id;
  // A poll that fails (a connection the harness closed as it was reused) is polled again; the last failure is told.
  let failed: unknown;
  const status = async (): Promise<string | undefined> =>
    ((await call('GET', `${next.url}/v2/${endpoint}/status/${jobId}`)).json as { status?: string }).status;
  await waitFor(
    async () => (await status().catch((error: unknown) => void (failed = error))) === 'COMPLETED',
    'a job completes on a worker of the next harness',
    120_000,
    100,
  ).catch((error: unknown) => {
    throw new Error(`${String(error)} (last failed poll: ${String(failed)}); the next harness's log ends:\n${next.stderr().slice(-3_000)}`);
  });
  const now = await holders();
  expect(now, 'the slots, held by the next harness').toHaveLength(2);
  expect(now).not.toContain(killedMachine);
}, 300_000);
