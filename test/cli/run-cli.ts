/**
 * @module test/cli/run-cli
 * The `serverless-worker` CLI as a real child process with a clean connection environment,
 * for the management command tests. It runs the CLI as installed users run it: compiled,
 * from the run's one build of both packages (test/package/global-setup.ts), which a
 * `beforeAll` registered here asks for (the first ask of a run builds: minutes on a loaded
 * machine). Through tsx each start cost about 0.5 s more CPU, and these files start some
 * 200 of them a run. SW_TEST_CLI=source runs `node --import tsx src/cli/main.ts` instead
 * (no build: a quicker loop while editing the CLI).
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, expect } from 'vitest';
import { builtSdkDist } from '../package/pack-this-package.js';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** node's arguments before the CLI's own: set by the beforeAll below. */
let cliEntry: readonly string[] | undefined;

beforeAll(async () => {
  cliEntry = process.env.SW_TEST_CLI === 'source' ? ['--import', 'tsx', 'src/cli/main.ts'] : [join(await builtSdkDist(), 'cli/main.js')];
}, 900_000);

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Run the CLI without SERVERLESS_WORKER_API_URL/_KEY or RUNPOD_API_KEY, plus `env`. */
export function runCli(args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  if (cliEntry === undefined) throw new Error('runCli before its beforeAll: call it from a test or a hook of a file that imports run-cli.ts');
  const base = { ...process.env };
  for (const name of ['SERVERLESS_WORKER_API_URL', 'SERVERLESS_WORKER_API_KEY', 'RUNPOD_API_KEY']) delete base[name];
  return new Promise((resolve) => {
    execFile(process.execPath, [...cliEntry!, ...args], { cwd: ROOT, env: { ...base, ...env }, timeout: 60_000 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

/** A word for `sh -c`: single-quoted, its own single quotes closed and escaped. */
const shellWord = (word: string): string => `'${word.replaceAll("'", `'\\''`)}'`;

/**
 * Run the CLI as `runCli` does, but with stdout and stderr on a real pseudo-terminal
 * (util-linux `script`), as a person at a prompt runs it: what the CLI decides by
 * `process.stdout.isTTY` is decided as on a terminal. Both streams arrive as one
 * (`stdout`), the terminal's CRLF line ends turned back into LF.
 */
export function runCliInTerminal(args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  if (cliEntry === undefined) throw new Error('runCliInTerminal before its beforeAll: call it from a test or a hook of a file that imports run-cli.ts');
  const base = { ...process.env };
  for (const name of ['SERVERLESS_WORKER_API_URL', 'SERVERLESS_WORKER_API_KEY', 'RUNPOD_API_KEY']) delete base[name];
  const command = [process.execPath, ...cliEntry, ...args].map(shellWord).join(' ');
  return new Promise((resolve) => {
    // -q: no "Script started" lines; -e: the command's exit status; -c: the command; /dev/null: no typescript file.
    execFile('script', ['-qec', command, '/dev/null'], { cwd: ROOT, env: { ...base, ...env }, timeout: 60_000 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      resolve({ code, stdout: stdout.replaceAll('\r\n', '\n'), stderr });
    });
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
