/**
 * Regression: a read of a GPU tool that is not installed, cancelled (or hit by the
 * worker's shutdown) before the spawn failure is known, once made Node kill the
 * child's pid 0: kill(0, SIGTERM), a SIGTERM to the whole process group, which took
 * down the worker's supervisor (in CI: the test runner and .ci/run). The fixture runs
 * in a process group of its own and listens for that signal.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../child-process.js';
import { nodeArgsFor } from '../compiled-fixtures.js';

describe('GPU tool runs and the process group', () => {
  it('never signal the worker’s process group when a missing tool’s read is cancelled', async () => {
    const child = spawn(process.execPath, nodeArgsFor(join(REPO_ROOT, 'test/fixtures/workers/missing-tool-cancel.ts')), {
      cwd: REPO_ROOT,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text));
    const code = await new Promise<number | null>((resolve, reject) => {
      const timer = setTimeout(() => {
        if (child.pid) process.kill(child.pid, 'SIGKILL');
        reject(new Error(`fixture did not finish; stdout: ${stdout}`));
      }, 30_000);
      child.once('exit', (exitCode) => {
        clearTimeout(timer);
        resolve(exitCode);
      });
    });
    expect(stdout).not.toContain('GROUP_SIGNALLED');
    expect(stdout).toContain('DONE');
    expect(stdout.match(/^missing$/gm)).toHaveLength(5);
    expect(code).toBe(0);
  });
});
