/**
 * serverless-worker/testing under node:test, as the README and the scaffold use it:
 * node:test's mock.timers moves a job's timers (a one-minute wait, an execution
 * timeout) without waiting. The file runs in a real `node --import tsx --test` process.
 */
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../child-process.js';

describe('serverless-worker/testing with node:test', () => {
  it('runJob under mock.timers: the wait and the execution timeout follow the mocked clock', { timeout: 60_000 }, async () => {
    const result = await execa(process.execPath, ['--import', 'tsx', '--test', join(REPO_ROOT, 'test/fixtures/testing/node-test-mock-timers.ts')], {
      cwd: REPO_ROOT,
      reject: false,
      timeout: 50_000,
      all: true,
      env: { NODE_OPTIONS: '' },
    });
    expect(result.exitCode, String(result.all)).toBe(0);
    expect(String(result.all)).toMatch(/^# pass 2$/m);
    expect(String(result.all)).toMatch(/^# fail 0$/m);
  });
});
