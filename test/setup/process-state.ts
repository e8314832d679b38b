/**
 * @module test/setup/process-state
 * What a test file may change in its process and must not hand to the next file of a shared
 * worker (the tiers with `isolate: false`, test/setup/tiers.ts): the environment variables,
 * the working directory, the file mode mask and the exit code. A worker process of an
 * isolated tier runs one file, so it starts each file with them as vitest set them;
 * test/setup/shared-worker.ts captures them before each file of a shared tier and puts them
 * back after it.
 */

export interface ProcessState {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  readonly umask: number;
  readonly exitCode: typeof process.exitCode;
}

export function captureProcessState(): ProcessState {
  return { env: { ...process.env }, cwd: process.cwd(), umask: process.umask(), exitCode: process.exitCode };
}

/** Put `state` back; returns what differed (`env NAME`, `cwd`, `umask`, `exitCode`), for a caller that reports it. */
export function restoreProcessState(state: ProcessState): string[] {
  const changed: string[] = [];
  for (const name of new Set([...Object.keys(process.env), ...Object.keys(state.env)])) {
    const value = state.env[name];
    if (process.env[name] === value) continue;
    changed.push(`env ${name}`);
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  if (process.cwd() !== state.cwd) {
    changed.push('cwd');
    process.chdir(state.cwd);
  }
  if (process.umask() !== state.umask) {
    changed.push('umask');
    process.umask(state.umask);
  }
  if (process.exitCode !== state.exitCode) {
    changed.push('exitCode');
    process.exitCode = state.exitCode;
  }
  return changed;
}
