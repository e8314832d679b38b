/**
 * @module test/cli/run-cli
 * The `serverless-worker` CLI as a real child process (`node --import tsx
 * src/cli/main.ts ...`) with a clean connection environment, for the management
 * command tests.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Run the CLI without SERVERLESS_WORKER_API_URL/_KEY or RUNPOD_API_KEY, plus `env`. */
export function runCli(args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  const base = { ...process.env };
  for (const name of ['SERVERLESS_WORKER_API_URL', 'SERVERLESS_WORKER_API_KEY', 'RUNPOD_API_KEY']) delete base[name];
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'src/cli/main.ts', ...args],
      { cwd: ROOT, env: { ...base, ...env }, timeout: 60_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** The one line of stderr that carries a failure (tsx or npm may add warnings). */
export function failureLine(run: CliRun): string {
  const lines = run.stderr.split('\n').filter((line) => line.startsWith('serverless-worker:'));
  expect(lines, run.stderr).toHaveLength(1);
  return lines[0] ?? '';
}

/** stdout of a run that must have succeeded, parsed as JSON. */
export function okJson<T>(run: CliRun): T {
  expect(run.code, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as T;
}

/** A serverless NVIDIA template's record with empty defaults, for a test's store. */
export function gpuTemplateInput(name: string) {
  return {
    name,
    imageName: 'img',
    category: 'NVIDIA' as const,
    containerDiskInGb: 10,
    dockerEntrypoint: [],
    dockerStartCmd: [],
    env: {},
    isPublic: false,
    isServerless: true,
    ports: [],
    readme: '',
    volumeInGb: 0,
    volumeMountPath: '/workspace',
  };
}
