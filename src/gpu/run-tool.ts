/**
 * @module gpu/run-tool
 * Runs nvidia-smi or rocm-smi once, without a shell, under a timeout, and says how the
 * run ended. Never throws: each way a run can end is a value the readers turn into a
 * reading or a "no GPU readings" reason.
 */
import { findExecutable } from './find-executable.js';
import { clip } from './reading.js';

export type ToolRun =
  | { kind: 'ok'; stdout: string; stderr: string }
  | { kind: 'missing'; message: string }
  | { kind: 'timed-out'; message: string }
  | { kind: 'cancelled'; message: string }
  | { kind: 'failed'; message: string; exitCode: number | undefined; stdout: string; stderr: string };

export interface RunToolOptions {
  /** Kill the tool after this long; default 3000 ms (nvidia-smi takes ~1 s without persistence mode). */
  timeoutMs?: number;
  /** Environment of the tool, PATH included; default process.env. */
  env?: NodeJS.ProcessEnv;
  /** Aborts the run (the tool is killed). */
  signal?: AbortSignal;
}

/** Default timeout of one tool run, in ms. */
export const DEFAULT_GPU_TOOL_TIMEOUT_MS = 3000;

// A tool that ignores SIGTERM after its timeout gets SIGKILL this much later.
const FORCE_KILL_AFTER_MS = 1000;
// Far above any real answer (a few hundred bytes per GPU); stops a runaway tool.
const MAX_OUTPUT_BYTES = 4 * 1024 * 1024;

/** Run `file args` once; see ToolRun for the outcomes. */
export async function runGpuTool(file: string, args: readonly string[], options: RunToolOptions = {}): Promise<ToolRun> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_GPU_TOOL_TIMEOUT_MS;
  try {
    return await run(file, args, timeoutMs, options);
  } catch (error) {
    // reject: false covers every way the tool can end; this is execa refusing to start it.
    const message = `could not run (${clip(error instanceof Error ? error.message : String(error))})`;
    return { kind: 'failed', message, exitCode: undefined, stdout: '', stderr: '' };
  }
}

async function run(file: string, args: readonly string[], timeoutMs: number, options: RunToolOptions): Promise<ToolRun> {
  const env = options.env ?? process.env;
  // Never spawn a tool that is not there (see find-executable.ts: killing a failed
  // spawn signals the whole process group).
  const executable = await findExecutable(file, env.PATH);
  if (executable === undefined) return { kind: 'missing', message: 'not found on PATH' };
  if (options.signal?.aborted) return { kind: 'cancelled', message: 'the read was cancelled' };
  // Loaded on first use: execa is the heaviest import of a worker's start, and a worker
  // on a machine without a GPU tool, or with GPU sampling off, never runs one.
  const { execa } = await import('execa');
  const subprocess = execa(executable, args, {
    timeout: timeoutMs,
    forceKillAfterDelay: FORCE_KILL_AFTER_MS,
    reject: false,
    shell: false,
    stdin: 'ignore',
    env,
    extendEnv: false,
    maxBuffer: MAX_OUTPUT_BYTES,
    windowsHide: true,
    // A read lasts at most timeoutMs: no exit hook (signal-exit) that would kill it,
    // perhaps before it has a pid, when the worker gets SIGTERM.
    cleanup: false,
  });
  // Cancel by hand, and only a tool that really started (a pid of 0 would mean the group).
  const cancel = (): void => {
    if (subprocess.pid) subprocess.kill();
  };
  options.signal?.addEventListener('abort', cancel, { once: true });
  let result: Awaited<typeof subprocess>;
  try {
    result = await subprocess;
  } finally {
    options.signal?.removeEventListener('abort', cancel);
  }
  if (options.signal?.aborted && result.failed) return { kind: 'cancelled', message: 'the read was cancelled' };
  const stdout = typeof result.stdout === 'string' ? result.stdout : '';
  const stderr = typeof result.stderr === 'string' ? result.stderr : '';
  if (!result.failed) return { kind: 'ok', stdout, stderr };
  if (result.code === 'ENOENT') return { kind: 'missing', message: 'not found on PATH' };
  if (result.timedOut) return { kind: 'timed-out', message: `did not answer within ${timeoutMs} ms and was killed` };
  const said = clip(stderr || stdout);
  const how =
    result.exitCode !== undefined
      ? `exited with code ${result.exitCode}`
      : result.signal
        ? `was killed by ${result.signal}`
        : `could not run (${result.code ?? clip(result.shortMessage ?? 'unknown error')})`;
  return { kind: 'failed', message: said ? `${how}: ${said}` : how, exitCode: result.exitCode, stdout, stderr };
}
