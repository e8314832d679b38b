/**
 * @module test/cli/run-cli
 * The `serverless-worker` CLI as a real child process, compiled, from the run's one build
 * of both packages (test/package/global-setup.ts), which a `beforeAll` registered here asks
 * for (the first ask of a run builds: minutes on a loaded machine): what users run. For the
 * system tier's smoke tests (compiled-cli.system.test.ts); the management commands' own
 * tests run the same program in process (cli-run.ts). SW_TEST_CLI=source runs `node
 * --import tsx src/cli/main.ts` instead (no build).
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { beforeAll } from 'vitest';
import { builtSdkDist } from '../package/pack-this-package.js';
import { ROOT, type CliRun } from './cli-run.js';

/** node's arguments before the CLI's own: set by the beforeAll below. */
let cliEntry: readonly string[] | undefined;

beforeAll(async () => {
  cliEntry = process.env.SW_TEST_CLI === 'source' ? ['--import', 'tsx', 'src/cli/main.ts'] : [join(await builtSdkDist(), 'cli/main.js')];
}, 900_000);

/** Run the compiled CLI without SERVERLESS_WORKER_API_URL/_KEY or RUNPOD_API_KEY, plus `env`. */
export function runCompiledCli(args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  if (cliEntry === undefined) throw new Error('runCompiledCli before its beforeAll: call it from a test or a hook of a file that imports run-cli.ts');
  const base = { ...process.env };
  for (const name of ['SERVERLESS_WORKER_API_URL', 'SERVERLESS_WORKER_API_KEY', 'RUNPOD_API_KEY']) delete base[name];
  return new Promise((resolve) => {
    execFile(process.execPath, [...cliEntry!, ...args], { cwd: ROOT, env: { ...base, ...env }, timeout: 60_000 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}
