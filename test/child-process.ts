/**
 * Helpers to run a TypeScript worker as a real child process through tsx.
 */
import { fileURLToPath } from 'node:url';
import { execa, type Options, type ResultPromise } from 'execa';

export const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));
/** tsx's loader by absolute URL, and our tsconfig, so a child can run from any directory. */
const TSX_LOADER = import.meta.resolve('tsx');
const TSCONFIG = fileURLToPath(new URL('../tsconfig.json', import.meta.url));

/** Start `node --import tsx <file> ...args` with a bounded run time. */
export function runTs(file: string, args: readonly string[] = [], options: Options = {}): ResultPromise<Options> {
  return execa(process.execPath, ['--import', TSX_LOADER, file, ...args], {
    cwd: REPO_ROOT,
    reject: false,
    timeout: 60_000,
    ...options,
    env: { LOG_LEVEL: 'info', TSX_TSCONFIG_PATH: TSCONFIG, ...options.env },
  });
}

/** The JSON documents printed one per line on stdout. */
export function jsonLines(stdout: string): unknown[] {
  return stdout
    .split('\n')
    .filter((line) => line.trim().startsWith('{'))
    .map((line) => JSON.parse(line) as unknown);
}

/** A child started by runTs. */
export type TsChild = ReturnType<typeof runTs>;

/** The children a test file started: `killAll()` (in afterEach) SIGKILLs those still running and waits for each to end. */
export class ChildList {
  readonly #children: TsChild[] = [];

  push(child: TsChild): void {
    this.#children.push(child);
  }

  async killAll(): Promise<void> {
    for (const child of this.#children.splice(0)) {
      if (child.exitCode === null) child.kill('SIGKILL');
      await child;
    }
  }
}
