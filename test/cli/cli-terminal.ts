/**
 * @module test/cli/cli-terminal
 * The `serverless-worker` CLI as a child process on a real pseudo-terminal (util-linux
 * `script`), as a person at a prompt runs it: what the CLI decides by
 * `process.stdout.isTTY` (a table or pretty lines on a terminal, JSON when piped) is decided
 * as on a terminal. From the sources' compiled test bundle (test/compiled-fixtures.ts): no
 * build of the packages (that is the system tier's), one child per call. Both streams
 * arrive as one (`stdout`), the terminal's CRLF line ends turned back into LF.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { nodeArgsFor } from '../compiled-fixtures.js';
import { ROOT, type CliRun } from './cli-run.js';

/** A word for `sh -c`: single-quoted, its own single quotes closed and escaped. */
const shellWord = (word: string): string => `'${word.replaceAll("'", `'\\''`)}'`;

/** Run the CLI on a terminal without SERVERLESS_WORKER_API_URL/_KEY or RUNPOD_API_KEY, plus `env`. */
export function runCliInTerminal(args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  const base = { ...process.env };
  for (const name of ['SERVERLESS_WORKER_API_URL', 'SERVERLESS_WORKER_API_KEY', 'RUNPOD_API_KEY']) delete base[name];
  const command = [process.execPath, ...nodeArgsFor(join(ROOT, 'src/cli/main.ts')), ...args].map(shellWord).join(' ');
  return new Promise((resolve) => {
    // -q: no "Script started" lines; -e: the command's exit status; -c: the command; /dev/null: no typescript file.
    execFile('script', ['-qec', command, '/dev/null'], { cwd: ROOT, env: { ...base, ...env }, timeout: 60_000 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      resolve({ code, stdout: stdout.replaceAll('\r\n', '\n'), stderr });
    });
  });
}
