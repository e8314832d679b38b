/**
 * The leftover worker processes a harness that is gone left (process-records.ts), stopped by
 * the next harness: SIGTERM, recorded in the leftover file before it is sent, then SIGKILL
 * after the deadline; a leftover a harness already told to stop (that harness died too
 * before it was gone) gets no second SIGTERM, which an SDK worker takes as "exit now" and
 * would drop the results it is delivering. Real process groups (a shell that traps SIGTERM
 * and writes it down), a record file as a SIGKILLed harness leaves it.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ProcessRecords } from '../../../packages/platform/src/harness/launcher/process-records.js';
import { processRuns, processStartTicks } from '../../../src/local/process-runs.js';
import { tempDir } from '../../gpu/fake-tools.js';
import { waitFor } from '../../kit/index.js';

const groups: ChildProcess[] = [];
afterEach(() => {
  for (const child of groups.splice(0)) {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
    } catch {
      // Gone.
    }
  }
});

/** A worker-like process group that survives SIGTERM and writes each one it gets to `termFile`. */
function stubbornGroup(termFile: string, readyFile: string): ChildProcess {
  const child = spawn('/bin/sh', ['-c', `trap 'echo term >> "$TERM_FILE"' TERM; : > "$READY_FILE"; while :; do sleep 0.05; done`], {
    detached: true,
    stdio: 'ignore',
    env: { ...process.env, TERM_FILE: termFile, READY_FILE: readyFile },
  });
  groups.push(child);
  return child;
}

/** The pid of a process that has exited: a harness that is gone. */
function deadPid(): number {
  const pid = spawnSync('/bin/sh', ['-c', 'echo $$'], { encoding: 'utf8' }).stdout.trim();
  return Number(pid);
}

/** The record file a SIGKILLed harness `harnessPid` left, listing `worker`. */
function leftoverFile(dataDir: string, harnessPid: number, worker: Record<string, unknown>): string {
  const folder = join(dataDir, 'launched-processes');
  mkdirSync(folder, { recursive: true });
  const file = join(folder, `${hostname().replace(/[^A-Za-z0-9_.-]/g, '_')}-${harnessPid}.json`);
  writeFileSync(file, JSON.stringify({ host: hostname(), harnessPid, workers: [worker] }));
  return file;
}

describe('leftover worker processes', () => {
  it('get SIGTERM, written down in the record before it is sent, then SIGKILL after the deadline', async () => {
    const dataDir = tempDir();
    const termFile = join(dataDir, 'terms');
    const ready = join(dataDir, 'ready');
    const group = stubbornGroup(termFile, ready);
    await waitFor(() => existsSync(ready), 'the group set its trap', 30_000, 20);
    const pid = group.pid ?? 0;
    const file = leftoverFile(dataDir, deadPid(), { workerId: 'ep-1', endpointId: 'ep', pid, startTicks: processStartTicks(pid) });
    const stopping = new ProcessRecords(dataDir).stopLeftovers(3_000);
    await waitFor(() => existsSync(termFile), 'the SIGTERM reached the group', 30_000, 20);
    // A harness started now (this one SIGKILLed) reads that it was sent.
    const record = JSON.parse(readFileSync(file, 'utf8')) as { workers: Array<{ stopSentAt?: number }> };
    expect(typeof record.workers[0]?.stopSentAt).toBe('number');
    const stopped = await stopping;
    expect(stopped).toMatchObject([{ workerId: 'ep-1', pid, killed: true }]);
    expect(readFileSync(termFile, 'utf8')).toBe('term\n');
    await waitFor(() => !processRuns(pid), 'the group is gone', 30_000, 20);
    expect(existsSync(file)).toBe(false);
  }, 60_000);

  it('already told to stop by a harness that died too: no second SIGTERM, SIGKILL once the deadline from the first has passed', async () => {
    const dataDir = tempDir();
    const termFile = join(dataDir, 'terms');
    const ready = join(dataDir, 'ready');
    const group = stubbornGroup(termFile, ready);
    await waitFor(() => existsSync(ready), 'the group set its trap', 30_000, 20);
    const pid = group.pid ?? 0;
    leftoverFile(dataDir, deadPid(), { workerId: 'ep-1', endpointId: 'ep', pid, startTicks: processStartTicks(pid), stopSentAt: Date.now() });
    const stopped = await new ProcessRecords(dataDir).stopLeftovers(500);
    expect(stopped).toMatchObject([{ workerId: 'ep-1', pid, killed: true }]);
    await waitFor(() => !processRuns(pid), 'the group is gone', 30_000, 20);
    expect(existsSync(termFile)).toBe(false);
  }, 60_000);
});
