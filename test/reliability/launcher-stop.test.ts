/**
 * SIGTERM to a `serverless-worker harness --store postgres://… --image …` while its
 * launcher is scaling up (workersMin 2, workers that take 2 s to init: the first has
 * started, the second is on its way): no worker is launched after the signal, the
 * harness exits 0, and no worker process it started is left. Three tries, each on a
 * fresh database; the figures are printed.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { groupRuns } from '../../packages/platform/src/harness/launcher/process-liveness.js';
import { ChildList } from '../child-process.js';
import { processRuns, processStartTicks } from '../../src/local/process-runs.js';
import { LAUNCHER_WORKER_COMMAND } from '../harness/launcher/launcher-setup.js';
import { fetchOkJson, startHarnessProcess, waitFor } from '../kit/index.js';
import { tempDir } from '../gpu/fake-tools.js';
import { createTestDatabase, type TestDatabase } from '../postgres/test-database.js';
import { printFigures, since } from './support/figures.js';

const children = new ChildList();
const databases: TestDatabase[] = [];
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
  for (const database of databases.splice(0)) await database.drop();
});

const TRIES = 3;

/**
 * Whether a process of group `pgid` still runs a second after the harness exited. The
 * harness waits for each worker's 'close' (its exit and its output pipes closed), and a
 * process closes its files before it is done exiting: one run found the worker's node in
 * that last moment (a process of the group, its pipes closed, not yet a zombie) right as
 * the harness's exit was seen. A worker the harness left running holds its pipes and runs
 * on (its init alone takes 2 s here): still there after the second.
 */
async function groupStillRuns(pgid: number): Promise<boolean> {
  const until = performance.now() + 1_000;
  while (groupRuns(pgid)) {
    if (performance.now() > until) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return false;
}

describe('SIGTERM while the launcher scales up (PostgreSQL store)', () => {
  it(`launches nothing after the signal, exits 0, leaves no worker (${TRIES} tries)`, async () => {
    const exitMs: number[] = [];
    let launchedAfterSignal = 0;
    let left = 0;
    let started = 0;
    for (let attempt = 0; attempt < TRIES; attempt++) {
      const database = await createTestDatabase();
      databases.push(database);
      const harness = await startHarnessProcess(
        children,
        [
          '--store',
          database.url,
          '--gpus',
          'none',
          '--data-dir',
          tempDir(),
          '--ping-interval-ms',
          '1000',
          '--image',
          `test/worker:1=${LAUNCHER_WORKER_COMMAND}`,
        ],
        { timeoutMs: 180_000, env: { LOG_LEVEL: 'info' } },
      );
      const template = await fetchOkJson<{ id: string }>(`${harness.url}/v1/templates`, 'POST', {
        name: 'stop-during-scale-up',
        imageName: 'test/worker:1',
        category: 'CPU',
        env: { LOG_LEVEL: 'warn', TEST_INIT_MS: '2000' },
      });
      await fetchOkJson(`${harness.url}/v1/endpoints`, 'POST', { templateId: template.id, workersMin: 2, workersMax: 2 });
      await waitFor(() => harness.stderr().includes('scale up: started worker'), 'the scale-up began', 60_000, 5);
      const signalledAt = performance.now();
      harness.child.kill('SIGTERM');
      const result = await harness.child;
      exitMs.push(since(signalledAt));
      expect(result.exitCode, harness.stderr().slice(-2_000)).toBe(0);

      const lines = harness
        .stderr()
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as { msg?: string; as?: string });
      const signal = lines.findIndex((line) => String(line.msg).startsWith('shutdown signal received'));
      const launches = lines.map((line, index) => ({ line, index })).filter(({ line }) => String(line.msg).startsWith('scale up: started worker'));
      started += launches.length;
      launchedAfterSignal += launches.filter(({ index }) => index > signal).length;
      for (const { line } of launches) {
        const pid = Number(/^pid (\d+)$/.exec(line.as ?? '')?.[1]);
        if (!Number.isInteger(pid)) continue;
        groups.push({ pgid: pid, startTicks: processStartTicks(pid) });
        if (await groupStillRuns(pid)) left++;
      }
    }
    printFigures('launcher stop during scale-up (postgres)', {
      tries: TRIES,
      workersStarted: started,
      launchedAfterSignal,
      workersLeft: left,
      exitMsMax: Math.max(...exitMs),
      exitMsMin: Math.min(...exitMs),
    });
    expect(launchedAfterSignal).toBe(0);
    expect(left).toBe(0);
  }, 600_000);
});
