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
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    // No /proc (not Linux): signal 0 is the answer.
    return true;
  }
}
