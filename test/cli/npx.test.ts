/**
 * The README's commands use `npx serverless-worker` in a clone of this repository: the
 * bin link that `npm ci` makes runs the TypeScript sources (no build step).
 */
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../child-process.js';

describe('npx serverless-worker in a clone', () => {
  it('runs the CLI from the sources: --help lists the commands', { timeout: 60_000 }, async () => {
    const result = await execa('npx', ['--offline', '--no-install', 'serverless-worker', '--help'], {
      cwd: REPO_ROOT,
      reject: false,
      timeout: 50_000,
      all: true,
    });
    expect(result.exitCode, String(result.all)).toBe(0);
    for (const command of ['harness', 'build', 'init', 'gpu', 'template', 'endpoint']) expect(String(result.stdout)).toContain(command);
  });
});
