/**
 * The workers `serverless-worker harness --image` launches, against the harness as a real
 * child process and real signals: they get the harness's settings (--ping-interval-ms),
 * none outlives it (SIGKILL of the harness: an SDK worker holding no job exits by itself,
 * any other command is stopped by the next harness on the same --data-dir, whatever that
 * one's flags; a second SIGTERM SIGKILLs them before the harness exits).
 */
import { existsSync, writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { ChildList, describeProcess, runTs } from '../child-process.js';
import { LAUNCHER_WORKER_COMMAND, LAUNCHER_WORKER_PATH } from '../harness/launcher/launcher-setup.js';
import { fetchOkJson, startHarnessProcess, waitFor, type HarnessProcess } from '../kit/index.js';
import { tempDir } from '../gpu/fake-tools.js';
import { processRuns, processStartTicks } from '../../src/local/process-runs.js';
import { printFigures, since } from '../reliability/support/figures.js';

const children = new ChildList();
/** Process groups the tests' harnesses launched: SIGKILLed after each test, whatever happened. */
const groups: Array<{ pgid: number; startTicks: string | undefined }> = [];

afterEach(async () => {
  await children.killAll();
  // Only a group whose leader is still the process the test saw start: a reused pid is someone else's.
  for (const { pgid, startTicks } of groups.splice(0)) {
    if (startTicks === undefined || !processRuns(pgid, startTicks)) continue;
    try {
      process.kill(-pgid, 'SIGKILL');
    } catch {
      // Gone meanwhile.
    }
  }
});

interface LogLine {
  workerId: string;
  stream: string;
  line: string;
}

async function endpointOn(harness: HarnessProcess, imageName: string, endpoint: Record<string, unknown>, env: Record<string, string> = {}): Promise<string> {
  const template = await fetchOkJson<{ id: string }>(`${harness.url}/v1/templates`, 'POST', {
    name: `t-${imageName}`,
    imageName,
    category: 'CPU',
    env: { LOG_LEVEL: 'warn', ...env },
  });
  return (await fetchOkJson<{ id: string }>(`${harness.url}/v1/endpoints`, 'POST', { templateId: template.id, ...endpoint })).id;
}

/** The pid of the launched worker's shell (its process group), from the launcher's `started (pid N)` line. */
async function launchedPid(harness: HarnessProcess, endpointId: string): Promise<number> {
  const pid = await waitFor(
    async () => {
      const { lines } = await fetchOkJson<{ lines: LogLine[] }>(`${harness.url}/v2/${endpointId}/logs`);
      const started = lines.map((entry) => /^started \(pid (\d+)\)/.exec(entry.line)).find(Boolean);
      return started ? Number(started[1]) : undefined;
    },
    `a launched worker of ${endpointId}`,
    60_000,
    100,
  );
  groups.push({ pgid: pid, startTicks: processStartTicks(pid) });
  return pid;
}

/** The launcher fixture's init event (its pid, RUNPOD_PING_INTERVAL, SW_HARNESS_PID). */
async function initEvent(harness: HarnessProcess, endpointId: string): Promise<{ pid: number; pingInterval?: string; harnessPid?: string }> {
  return waitFor(
    async () => {
      const { lines } = await fetchOkJson<{ lines: LogLine[] }>(`${harness.url}/v2/${endpointId}/logs`);
      const init = lines
        .filter((entry) => entry.stream === 'stdout' && entry.line.includes('"event":"init"'))
        .map((entry) => JSON.parse(entry.line) as { pid: number });
      return init[0];
    },
    `the init event of ${endpointId}'s worker`,
    90_000,
    100,
  );
}

describe('the workers a harness launches', () => {
  it('get its --ping-interval-ms: a job longer than three default intervals of silence completes on them', async () => {
    const harness = await startHarnessProcess(
      children,
      ['--gpus', 'none', '--data-dir', tempDir(), '--ping-interval-ms', '1000', '--image', `test/worker:1=${LAUNCHER_WORKER_COMMAND}`],
      {
        timeoutMs: 180_000,
      },
    );
    const endpointId = await endpointOn(harness, 'test/worker:1', { workersMin: 1, workersMax: 1 });
    // With the platform's 10 s heartbeat, the harness (1 s x 3 missed) declares the worker gone within this job.
    const job = await fetchOkJson<{ id: string }>(`${harness.url}/v2/${endpointId}/run`, 'POST', { input: { ms: 6_000 } });
    const init = await initEvent(harness, endpointId);
    expect(init.pingInterval).toBe('1000');
    const done = await waitFor(
      async () => {
        const status = await fetchOkJson<{ status: string; error?: string }>(`${harness.url}/v2/${endpointId}/status/${job.id}`);
        return ['COMPLETED', 'FAILED'].includes(status.status) ? status : undefined;
      },
      'the job ended',
      120_000,
      200,
    );
    expect(done.status, JSON.stringify(done)).toBe('COMPLETED');
    expect(harness.stderr()).not.toContain('declared gone');
  }, 240_000);

  it('SIGKILL of the harness: its SDK worker exits by itself, another command is stopped by the next harness on the data folder, even one without --image', async () => {
    const dataDir = tempDir();
    const args = [
      '--gpus',
      'none',
      '--data-dir',
      dataDir,
      '--ping-interval-ms',
      '1000',
      '--image',
      `test/worker:1=${LAUNCHER_WORKER_COMMAND}`,
      '--image',
      'test/sleeper:1=sleep 600',
    ];
    const first = await startHarnessProcess(children, args, { timeoutMs: 180_000 });
    const sdkEndpoint = await endpointOn(first, 'test/worker:1', { workersMin: 1, workersMax: 1 });
    const otherEndpoint = await endpointOn(first, 'test/sleeper:1', { workersMin: 1, workersMax: 1 });
    const sdk = await initEvent(first, sdkEndpoint);
    expect(sdk.harnessPid).toBe(String(first.child.pid));
    const sdkGroup = await launchedPid(first, sdkEndpoint);
    const otherGroup = await launchedPid(first, otherEndpoint);
    const otherStart = processStartTicks(otherGroup);
    const sdkStart = processStartTicks(sdk.pid);
    const shellStart = processStartTicks(sdkGroup);
    expect(processRuns(sdk.pid, sdkStart)).toBe(true);

    first.child.kill('SIGKILL');
    await first.child;
    const killedAt = performance.now();
    // The SDK worker watches the harness's pid (checked every second): gone well within its 3 s silence window, counted loosely on a loaded machine.
    // By pid and start time: pids wrap fast on a busy machine, and a new process may get the worker's.
    await waitFor(
      () => !processRuns(sdk.pid, sdkStart) && !processRuns(sdkGroup, shellStart),
      'the SDK worker exited after its harness was SIGKILLed',
      30_000,
      100,
    ).catch((error: unknown) => {
      // Which one stays, and where it waits (a CI run once saw this time out under load).
      throw new Error(`${String(error)}; worker ${describeProcess(sdk.pid)}; its shell ${describeProcess(sdkGroup)}`);
    });
    const sdkExitMs = since(killedAt);
    // `sleep` knows nothing of the harness: it runs on, until a harness on the same data folder starts.
    expect(processRuns(otherGroup, otherStart)).toBe(true);

    const restartedAt = performance.now();
    // No launcher of its own: the leftovers in its data folder are still its to stop (once it listens).
    const second = await startHarnessProcess(children, ['--data-dir', dataDir, '--ping-interval-ms', '1000'], { timeoutMs: 180_000 });
    const restartMs = since(restartedAt);
    await waitFor(() => !processRuns(otherGroup, otherStart), 'the next harness stopped the command the killed one left', 60_000, 50);
    const stoppedMs = since(restartedAt);
    printFigures('launched workers after a harness SIGKILL', {
      sdkWorkerExitMs: sdkExitMs,
      leftoverCommandsStoppedByNextHarness: 1,
      nextHarnessReadyMs: restartMs,
      leftoverGoneMs: stoppedMs,
    });
    // Its log comes through stderr, a pipe of its own that can lag behind the address it printed on stdout.
    const stopped = new RegExp(`stopped 1 worker process\\(es\\) a harness that is gone left running: ${otherEndpoint}-\\d+ \\(pid ${otherGroup}\\)`);
    await waitFor(() => stopped.test(second.stderr()), 'the next harness to log the worker it stopped', 30_000, 50).catch(() => undefined);
    expect(second.stderr()).toMatch(stopped);
    // At once, as a script reading the banner would: the harness listens for SIGTERM before its banner is out (a signal
    // that came first ended it by the default action in CI runs under load; harness-drain tests the order).
    second.child.kill('SIGTERM');
    const secondEnd = await second.child;
    expect({ exitCode: secondEnd.exitCode, signal: secondEnd.signal }, `the next harness's log ends:\n${second.stderr().slice(-3_000)}`).toEqual({
      exitCode: 0,
      signal: undefined,
    });
  }, 240_000);

  it('a second SIGTERM while workers drain SIGKILLs them before the harness exits', async () => {
    const dataDir = tempDir();
    // A worker that ignores SIGTERM (the shell and its sleep), with a drain deadline far away. It says when its trap is set:
    // a SIGTERM that reached the shell before that (a CI run under load saw it) ended it, and nothing was left to drain.
    const trapped = `${dataDir}/trap-set`;
    const stubborn = `trap '' TERM; : > '${trapped}'; sleep 600`;
    const config = `${dataDir}/launcher.json`;
    writeFileSync(config, JSON.stringify({ images: { 'test/stubborn:1': stubborn }, gpus: 'none', shutdownDeadlineMs: 600_000 }));
    const harness = await startHarnessProcess(children, ['--data-dir', dataDir, '--launcher-config', config], { timeoutMs: 180_000 });
    const endpointId = await endpointOn(harness, 'test/stubborn:1', { workersMin: 1, workersMax: 1 });
    const group = await launchedPid(harness, endpointId);
    const shellStart = processStartTicks(group);
    await waitFor(() => existsSync(trapped), 'the worker set its SIGTERM trap', 30_000, 50);

    harness.child.kill('SIGTERM');
    await waitFor(() => harness.stderr().includes('(shutdown)'), 'the launcher told its worker to stop', 30_000, 50);
    expect(processRuns(group, shellStart)).toBe(true);
    const secondAt = performance.now();
    harness.child.kill('SIGTERM');
    const result = await harness.child;
    const exitMs = since(secondAt);
    expect(result.exitCode).toBe(143);
    await waitFor(() => !processRuns(group, shellStart), 'the worker was SIGKILLed with its harness', 10_000, 50);
    printFigures('second SIGTERM while a worker ignores the first', { harnessExitMs: exitMs, workerGoneMs: since(secondAt), workersLeft: 0 });
    expect(harness.stderr()).toContain('second signal: killing what must not outlive this process');
  }, 240_000);

  it('a worker told SW_HARNESS_GONE_AFTER_MS (what a launched container gets) exits once its harness stays unreachable that long', async () => {
    const harness = await startHarnessProcess(children, ['--ping-interval-ms', '1000', '--endpoint', 'watched'], { timeoutMs: 120_000 });
    // Run as a launched container would be: the worker variables and the window, no harness pid to watch.
    const worker = runTs(LAUNCHER_WORKER_PATH, [], {
      env: { ...harness.workerEnv, RUNPOD_POD_ID: 'container-like-1', SW_HARNESS_GONE_AFTER_MS: '3000', LOG_LEVEL: 'info' },
      timeout: 120_000,
    });
    children.push(worker);
    let stdout = '';
    worker.stdout?.on('data', (data: Buffer) => (stdout += data.toString('utf8')));
    await waitFor(() => stdout.includes('"event":"init"'), 'the worker started', 60_000, 50);
    await waitFor(
      async () =>
        (await fetchOkJson<{ workers: Array<{ id: string }> }>(`${harness.url}/ui/api/overview`)).workers.some((row) => row.id === 'container-like-1'),
      'the harness heard from the worker',
      60_000,
      100,
    );
    harness.child.kill('SIGKILL');
    await harness.child;
    const killedAt = performance.now();
    const result = await worker;
    printFigures('worker watching an unreachable harness', { windowMs: 3_000, exitMs: since(killedAt) });
    expect(result.exitCode).toBe(1);
    expect(String(result.stderr)).toContain('has been unreachable for 3000 ms; this worker holds no job: exiting');
  }, 180_000);
});
