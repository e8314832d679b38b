/**
 * @module test/cli/cli-run
 * The `serverless-worker` program run in the test's own process, for the management
 * command tests: `runProgram` (src/cli/program.ts) with the arguments, its stdout and
 * stderr gathered through commander's output configuration, the connection variables
 * (SERVERLESS_WORKER_API_URL/_KEY, RUNPOD_API_KEY) taken out of the environment and
 * `env` put in for the run, the working directory the repository's. The same
 * program as the command, minus a process start per call (28 compiled CLI starts, after
 * building both packages, before). The compiled command itself, as users run it:
 * test/cli/compiled-cli.system.test.ts (run-cli.ts). Calls made at the same time (a test's
 * `Promise.all`) take turns, each run with its own variables: they share process.env and
 * the working directory, and overlapping runs read each other's variables and, restoring
 * each other's values, left the last one's in the process (cli-run.unit.test.ts).
 */
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { runProgram } from '../../src/cli/program.js';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

const CONNECTION_VARIABLES = ['SERVERLESS_WORKER_API_URL', 'SERVERLESS_WORKER_API_KEY', 'RUNPOD_API_KEY'];

/** The last run asked for, settled or not: the next one starts after it. */
let previousRun: Promise<unknown> = Promise.resolve();

/** Run the program without SERVERLESS_WORKER_API_URL/_KEY or RUNPOD_API_KEY, plus `env`, in this process, after the runs asked for before. */
export function runCli(args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  const run = previousRun.then(() => runAlone(args, env));
  previousRun = run.catch(() => undefined);
  return run;
}

async function runAlone(args: string[], env: Record<string, string>): Promise<CliRun> {
  const saved = new Map<string, string | undefined>();
  for (const name of new Set([...CONNECTION_VARIABLES, ...Object.keys(env)])) {
    saved.set(name, process.env[name]);
    delete process.env[name];
  }
  Object.assign(process.env, env);
  const cwd = process.cwd();
  process.chdir(ROOT);
  let stdout = '';
  let stderr = '';
  try {
    const code = await runProgram(args, { writeOut: (text) => (stdout += text), writeErr: (text) => (stderr += text) });
    return { code, stdout, stderr };
  } finally {
    process.chdir(cwd);
    for (const [name, value] of saved) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
}

/** The one line of stderr that carries a failure. */
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
