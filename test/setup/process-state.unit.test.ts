/**
 * test/setup/process-state.ts, which test/setup/shared-worker.ts runs around each file of a
 * shared tier: what a file changed in the process is put back, and named.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { captureProcessState, restoreProcessState, type ProcessState } from './process-state.js';

const ADDED = 'SW_TEST_PROCESS_STATE_ADDED';
const CHANGED = 'SW_NODE_VERSION_WARNING';

let saved: ProcessState | undefined;
const dirs: string[] = [];

afterEach(() => {
  if (saved !== undefined) restoreProcessState(saved);
  saved = undefined;
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('process state', () => {
  it('puts back the environment (added, changed and removed variables), the working directory, the mask and the exit code', () => {
    saved = captureProcessState();
    const state = captureProcessState();
    const dir = mkdtempSync(join(tmpdir(), 'sw-process-state-'));
    dirs.push(dir);
    const removed = Object.keys(process.env).find((name) => name !== CHANGED);
    expect(removed).toBeDefined();

    process.env[ADDED] = 'left behind';
    process.env[CHANGED] = 'changed';
    if (removed !== undefined) delete process.env[removed];
    process.chdir(dir);
    process.umask(state.umask === 0o077 ? 0o022 : 0o077);
    process.exitCode = 3;

    expect(restoreProcessState(state).sort()).toEqual(['cwd', `env ${ADDED}`, `env ${CHANGED}`, `env ${removed}`, 'exitCode', 'umask'].sort());
    expect(captureProcessState()).toEqual(state);
    expect(ADDED in process.env).toBe(false);
  });

  it('names nothing when nothing changed', () => {
    expect(restoreProcessState(captureProcessState())).toEqual([]);
  });
});
