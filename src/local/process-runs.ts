/**
 * @module local/process-runs
 * Whether a process still runs, told apart from a later process that got its pid (pids
 * wrap quickly on a busy machine: 32 768 by default): signal 0 reaches it (EPERM: it runs
 * as another user), on Linux it is no zombie, and, where its start time was read while
 * it surely ran, that start time is still the pid's.
 */
const { readFileSync } = process.getBuiltinModule('node:fs');

/** The fields of /proc/<pid>/stat after the command name (the state first), or undefined where it cannot be read. */
function procStat(pid: number): string[] | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return text.slice(text.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** The process's start time (clock ticks since boot, /proc/<pid>/stat field 22); undefined off Linux. */
export function processStartTicks(pid: number): string | undefined {
  return procStat(pid)?.[19];
}

/** Whether `pid` runs (and, given `startTicks`, is still the process that started then). */
export function processRuns(pid: number, startTicks?: string): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  const stat = procStat(pid);
  // No /proc (not Linux): signal 0 is the answer.
  if (stat === undefined) return true;
  return stat[0] !== 'Z' && (startTicks === undefined || stat[19] === startTicks);
}
