/**
 * The launcher reads what its workers do from real job activity, with real worker
 * processes: a worker serving a steady stream of short jobs is never stopped as idle
 * (idleness comes from takes and ends, not from what a scaler tick samples) and every
 * short job's wait is counted, on the memory and on the PostgreSQL job store; a worker whose init fails once the
 * harness has heard it initializing (the test releases it then) is never `idle`, and its crashes count as start-up crashes
 * (growing backoff, endpoint unhealthy); a worker that ignores SIGTERM is SIGKILLed
 * after the shutdown deadline. Figures are printed; no timing thresholds.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { PostgresJobStore } from '../../../packages/platform/src/harness/store/postgres/postgres-job-store.js';
import { createTestDatabase, type TestDatabase } from '../../postgres/test-database.js';
import { waitFor } from '../../kit/index.js';
import { LAUNCHER_WORKER_COMMAND, messagesWith, startLauncherHarness, type LauncherHarness } from './launcher-setup.js';

let running: LauncherHarness | undefined;
let database: TestDatabase | undefined;
let releaseDir: string | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
  await database?.drop();
  database = undefined;
  if (releaseDir !== undefined) rmSync(releaseDir, { recursive: true, force: true });
  releaseDir = undefined;
}, 60_000);

/**
 * One short job every 150 ms for 3 s on an endpoint of at most one worker with idleTimeout 1 s.
 * 3 idleTimeouts (30 scaler ticks, most of them between two 5 ms jobs): a scaler that judged
 * idleness from what a tick samples would stop the worker within the first one or two; 5 s
 * proved no more and cost 2 s a store.
 */
const STREAM_MS = 3_000;
async function steadyShortJobs(h: LauncherHarness, label: string): Promise<void> {
  const endpoint = await h.createEndpoint(
    { workersMin: 0, workersMax: 1, idleTimeout: 1, scalerType: 'REQUEST_COUNT', scalerValue: 1 },
    { imageName: 'test/activity:1' },
  );

  // The first job starts the worker; wait until it is done, then keep jobs coming for 3 idleTimeouts.
  const first = await h.run(endpoint.id, { ms: 0 });
  await waitFor(async () => (await h.status(endpoint.id, first)).status === 'COMPLETED', 'the first job COMPLETED', 120_000, 50);
  const ids = [first];
  const streamStarted = Date.now();
  let lastSubmitted = Date.now();
  while (Date.now() - streamStarted < STREAM_MS) {
    await sleep(150);
    ids.push(await h.run(endpoint.id, { ms: 5 }));
    lastSubmitted = Date.now();
  }
  await waitFor(
    async () => (await Promise.all(ids.map((id) => h.status(endpoint.id, id)))).every((job) => job.status === 'COMPLETED'),
    'every job COMPLETED',
    60_000,
    100,
  );
  const events = () => h.launcher.scaleEvents(endpoint.id);
  const downsWhileServing = events().filter((event) => event.kind === 'scale-down' && event.at <= lastSubmitted);
  expect(downsWhileServing).toEqual([]);
  expect(events().filter((event) => event.kind === 'scale-up')).toHaveLength(1);

  // The jobs stopped: the worker goes after idleTimeout (1 s).
  const down = await waitFor(() => events().find((event) => event.kind === 'scale-down'), 'the idle worker stopped', 60_000, 50);
  expect(down.message).toContain('(idle)');
  await waitFor(async () => (await h.launcher.pods()).length === 0, 'the worker gone', 60_000, 50);

  // Every job's wait was counted once, short ones included (at take time, not sampled).
  const metrics = await h.server.metrics.text();
  expect(metrics).toContain(`serverless_worker_harness_job_wait_seconds_count{endpoint="${endpoint.id}"} ${ids.length}`);
  expect(metrics).toContain(`serverless_worker_harness_scale_downs_total{endpoint="${endpoint.id}",reason="idle"} 1`);
  expect(metrics).toContain(`serverless_worker_harness_worker_cold_start_seconds_count{endpoint="${endpoint.id}"} 1`);
  const coldStart = h.logLines.find((line) => line.endpointId === endpoint.id && typeof line.coldStartMs === 'number');
  console.log(
    `[launcher activity, ${label}] ${ids.length} jobs, one every 150 ms for ${STREAM_MS / 1_000} s on 1 worker: no idle stop while serving; ` +
      `stopped ${down.at - lastSubmitted} ms after the last submit (idleTimeout 1000 ms, tick 100 ms); cold start ${String(coldStart?.coldStartMs)} ms`,
  );
}

describe('idle time from job activity', () => {
  it('a worker serving one short job every 150 ms is never stopped as idle; once the jobs stop it is, after idleTimeout', async () => {
    running = await startLauncherHarness({ images: { 'test/activity:1': { command: LAUNCHER_WORKER_COMMAND } } });
    await steadyShortJobs(running, 'memory store');
  }, 200_000);

  it('the same on the PostgreSQL job store (events by notification)', async () => {
    database = await createTestDatabase();
    running = await startLauncherHarness(
      { images: { 'test/activity:1': { command: LAUNCHER_WORKER_COMMAND } } },
      await PostgresJobStore.open(await database.connect()),
    );
    await steadyShortJobs(running, 'PostgreSQL store');
  }, 200_000);
});

describe('start-up', () => {
  it('init that throws once heard initializing: initializing (not idle) meanwhile, start-up crashes with a growing backoff, endpoint unhealthy, no ready', async () => {
    const h = await startLauncherHarness({
      images: { 'test/init-fails:1': { command: LAUNCHER_WORKER_COMMAND } },
      backoff: { baseMs: 200, maxMs: 1_600, unhealthyAfter: 3 },
    });
    running = h;
    // Init runs until the test has seen the worker initializing in /health and heard by the harness;
    // the release file then lets it (and every later start's init, at once) throw.
    releaseDir = mkdtempSync(join(tmpdir(), 'sw-init-'));
    const release = join(releaseDir, 'release');
    const endpoint = await h.createEndpoint(
      { workersMin: 1, workersMax: 1 },
      { imageName: 'test/init-fails:1', env: { LOG_LEVEL: 'warn', TEST_INIT_UNTIL_FILE: release, TEST_INIT_THROWS: '1' } },
    );

    // Sample /health while the endpoint goes unhealthy.
    const seen = { initializing: 0, idle: 0, heard: 0 };
    const health = await waitFor(
      async () => {
        const now = await h.health(endpoint.id);
        if ((now.workers.initializing ?? 0) > 0) seen.initializing++;
        if ((now.workers.idle ?? 0) > 0) seen.idle++;
        if ((await h.harness.findEndpoint(endpoint.id)?.workers.all())?.some((worker) => worker.initializing)) seen.heard++;
        if (seen.heard > 0 && seen.initializing > 0) writeFileSync(release, '');
        return now.healthy === false ? now : undefined;
      },
      'the endpoint unhealthy',
      120_000,
      50,
    );
    expect(health.unhealthyReason).toContain('exited during start-up 3 times in a row');
    // The workers sent heartbeats while init ran: the harness heard them, yet they stayed initializing.
    expect(seen.heard).toBeGreaterThan(0);
    expect(seen.initializing).toBeGreaterThan(0);
    expect(seen.idle).toBe(0);

    const events = h.launcher.scaleEvents(endpoint.id);
    const crashes = events.filter((event) => event.kind === 'crash');
    expect(crashes.slice(0, 3).map((event) => event.nextStartInMs)).toEqual([200, 400, 800]);
    expect(crashes.every((event) => event.message.includes('during start-up'))).toBe(true);
    expect(events.filter((event) => event.kind === 'ready')).toEqual([]);
    expect(events.filter((event) => event.kind === 'unhealthy')).toHaveLength(1);
    expect(messagesWith(h.logLines, 'endpointId', endpoint.id).some((msg) => msg.startsWith(`endpoint ${endpoint.id} unhealthy`))).toBe(true);
    expect(h.events(endpoint.id).filter((event) => event.event === 'init').length).toBeGreaterThanOrEqual(3);
    const metrics = await h.server.metrics.text();
    expect(metrics).not.toContain(`serverless_worker_harness_worker_cold_start_seconds_count{endpoint="${endpoint.id}"}`);
    expect(metrics).toContain(`serverless_worker_harness_worker_crashes_total{endpoint="${endpoint.id}",phase="startup"}`);
    console.log(
      `[launcher init fails] ${crashes.length} start-up crashes, backoff ${crashes.map((event) => event.nextStartInMs).join(', ')} ms; /health samples: ${seen.initializing} initializing, ${seen.idle} idle`,
    );
  }, 200_000);
});

describe('scale-down of a worker that ignores SIGTERM', () => {
  it('is SIGKILLed after the shutdown deadline', async () => {
    const h = await startLauncherHarness({ images: { 'test/stuck:1': { command: LAUNCHER_WORKER_COMMAND } }, shutdownDeadlineMs: 1_500 });
    running = h;
    const endpoint = await h.createEndpoint(
      { workersMin: 0, workersMax: 1, idleTimeout: 1 },
      { imageName: 'test/stuck:1', env: { LOG_LEVEL: 'warn', TEST_IGNORE_SIGTERM: '1' } },
    );
    const job = await h.run(endpoint.id, { ms: 0 });
    await waitFor(async () => (await h.status(endpoint.id, job)).status === 'COMPLETED', 'the job COMPLETED', 120_000, 50);
    const exit = await waitFor(() => h.launcher.scaleEvents(endpoint.id).find((event) => event.kind === 'exit'), 'the worker exited', 60_000, 50);
    const down = h.launcher.scaleEvents(endpoint.id).find((event) => event.kind === 'scale-down');
    expect(down?.message).toContain('SIGTERM (idle)');
    expect(exit.message).toContain('after SIGKILL: it outlived the shutdown deadline');
    expect(h.events(endpoint.id).some((event) => event.event === 'sigterm-ignored')).toBe(true);
    expect(await h.launcher.pods()).toEqual([]);
    const metrics = await h.server.metrics.text();
    expect(metrics).toContain(`serverless_worker_harness_scale_downs_total{endpoint="${endpoint.id}",reason="idle"} 1`);
    expect(metrics).not.toContain(`serverless_worker_harness_worker_crashes_total{endpoint="${endpoint.id}"`);
    console.log(`[launcher SIGKILL] SIGTERM ignored; exited ${exit.at - (down?.at ?? exit.at)} ms after SIGTERM (deadline 1500 ms): ${exit.message}`);
  }, 200_000);
});

describe("scale-down of a worker with a job longer than docker stop's default 10 s", () => {
  it('with the default deadlines (worker 30 s drain, launcher 40 s), the 12 s job finishes and the worker exits on SIGTERM, not SIGKILL', async () => {
    // The launcher's default deadline (no shutdownDeadlineMs here); the worker's default drain.
    const h = await startLauncherHarness({ shutdownDeadlineMs: undefined });
    running = h;
    expect(h.launcher.settings.shutdownDeadlineMs).toBe(40_000);
    const endpoint = await h.createEndpoint(
      { workersMin: 0, workersMax: 1, idleTimeout: 60 },
      { env: { LOG_LEVEL: 'warn', TEST_SHUTDOWN_TIMEOUT_MS: 'default' } },
    );
    const job = await h.run(endpoint.id, { mode: 'sleep', ms: 12_000 });
    await waitFor(() => h.events(endpoint.id).some((event) => event.event === 'started' && event.jobId === job), 'the job started', 120_000, 50);
    const stoppedAt = Date.now();
    // The launcher's close: SIGTERM to the worker, SIGKILL only after the deadline.
    await h.launcher.close();
    const exit = h.launcher.scaleEvents(endpoint.id).find((event) => event.kind === 'exit');
    expect(exit?.message).not.toContain('SIGKILL');
    expect(await h.status(endpoint.id, job)).toMatchObject({ status: 'COMPLETED' });
    console.log(`[launcher drain] a 12 s job finished after SIGTERM; the worker exited ${Date.now() - stoppedAt} ms after it: ${exit?.message}`);
  }, 200_000);
});
