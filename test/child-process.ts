/**
 * Helpers to run a TypeScript worker as a real child process: its compiled bundle under
 * plain node, or through tsx where it cannot be compiled (test/compiled-fixtures.ts).
 */
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { execa, type Options, type ResultPromise } from 'execa';
import { nodeArgsFor } from './compiled-fixtures.js';

export const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));
/**
 * The echo example imported whole (test/fixtures/workers/echo.ts), run from its compiled
 * bundle: for the cases where the example's test_input.json beside it is not the point. A
 * tsx start of the example itself (its README's form) costs about 2.5 s of CPU, the bundle's 0.4.
 */
export const ECHO_FIXTURE = fileURLToPath(new URL('./fixtures/workers/echo.ts', import.meta.url));
/** Our tsconfig, so a child run through tsx can run from any directory. */
const TSCONFIG = fileURLToPath(new URL('../tsconfig.json', import.meta.url));

/** Start `node <file's bundle> ...args` (or `node --import tsx <file> ...args`) with a bounded run time. */
export function runTs(file: string, args: readonly string[] = [], options: Options = {}): ResultPromise<Options> {
  return execa(process.execPath, [...nodeArgsFor(file), ...args], {
    cwd: REPO_ROOT,
    reject: false,
    timeout: 60_000,
    // execa SIGKILLs a child 5 s after a SIGTERM by default: a graceful stop under CI load (a harness draining its
    // launched workers) may take longer, and that SIGKILL would read as the child's own death.
    forceKillAfterDelay: 30_000,
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

/** Every process below `pid` now (children, theirs, and so on), read from /proc; none where /proc has no children files. */
export function descendantPids(pid: number): number[] {
  const found: number[] = [];
  const visit = (parent: number): void => {
    let tasks: string[];
    try {
      tasks = readdirSync(`/proc/${parent}/task`);
    } catch {
      return;
    }
    for (const task of tasks) {
      let words: string[];
      try {
        words = readFileSync(`/proc/${parent}/task/${task}/children`, 'utf8').split(/\s+/);
      } catch {
        continue;
      }
      for (const word of words) {
        const child = Number(word);
        if (word === '' || !Number.isInteger(child) || found.includes(child)) continue;
        found.push(child);
        visit(child);
      }
    }
  };
  visit(pid);
  return found;
}

/** One line on process `pid` for a failure message: its state, parent, kernel wait channel, threads and command; 'gone' when /proc has none. */
export function describeProcess(pid: number): string {
  const read = (file: string): string | undefined => {
    try {
      return readFileSync(`/proc/${pid}/${file}`, 'utf8');
    } catch {
      return undefined;
    }
  };
  const stat = read('stat');
  if (stat === undefined) return `${pid}: gone`;
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const threads = /^Threads:\s*(\d+)/m.exec(read('status') ?? '')?.[1] ?? '?';
  const command = (read('cmdline') ?? '').split('\0').join(' ').trim().slice(0, 160);
  return `${pid}: state ${fields[0] ?? '?'}, parent ${fields[1] ?? '?'}, waiting in ${read('wchan') ?? '?'}, ${threads} threads, ${command}`;
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
      // Its own children too (a --serve-api process's worker, in a process group of its own):
      // they hold the child's stdout, which the wait below waits on, and would otherwise
      // leave only by their orphan check (tested where that is the point: serve-api-supervisor).
      const descendants = child.pid === undefined ? [] : descendantPids(child.pid);
      if (child.exitCode === null) child.kill('SIGKILL');
      for (const pid of descendants) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // Gone already.
        }
      }
      await child;
    }
  }
}
