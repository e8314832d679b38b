/**
 * @module local/process-runs
 * Whether a process id names a running process: signal 0 reaches it (EPERM: it runs as
 * another user), and on Linux it is no zombie (exited, not yet reaped by its parent).
 */
import { readFileSync } from 'node:fs';

export function processRuns(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  return processState(pid) !== 'Z';
}

/** The one-letter state of /proc/<pid>/stat (R, S, Z, ...), or undefined where it cannot be read. */
export function processState(pid: number): string | undefined {
  const stat = procStat(pid);
  return stat?.[0];
}

/** The fields of /proc/<pid>/stat after the command name (state first), or undefined where it cannot be read. */
export function procStat(pid: number): string[] | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return text.slice(text.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** The process's start time (clock ticks since boot, /proc/<pid>/stat field 22): with the pid, it names one process; undefined off Linux. */
export function processStartTicks(pid: number): string | undefined {
  // Field 22 of the whole line is index 19 after the state (field 3).
  return procStat(pid)?.[19];
}
