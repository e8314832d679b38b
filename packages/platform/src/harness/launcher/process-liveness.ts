/**
 * @module harness/launcher/process-liveness
 * Whether a recorded process or process group still runs, and which process a pid names
 * (its start time), for the launcher's leftover records (process-records.ts) and the
 * docker launcher's leftovers. A zombie (exited, not yet reaped) counts as gone.
 */
const { readdirSync, readFileSync } = process.getBuiltinModule('node:fs');

export function processRuns(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    // EPERM: it runs, as another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  return procStat(pid)?.[0] !== 'Z';
}

/**
 * Whether any process of group `pgid` runs. Zombies do not count: a worker's child that
 * outlived its shell is reparented to the machine's init, which (in a container whose
 * init does not reap) may leave it a zombie for good.
 */
export function groupRuns(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  const states = groupStates(pgid);
  return states === undefined || states.some((state) => state !== 'Z');
}

/** The states of the processes of group `pgid` from /proc, or undefined where /proc cannot be read. */
function groupStates(pgid: number): string[] | undefined {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return undefined;
  }
  const states: string[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = procStat(Number(entry));
    // After the command name: state, ppid, pgrp.
    if (stat && Number(stat[2]) === pgid && stat[0] !== undefined) states.push(stat[0]);
  }
  return states;
}

/** The process's start time (clock ticks since boot, /proc/<pid>/stat field 22): with the pid, it names one process; undefined off Linux. */
export function processStartTicks(pid: number): string | undefined {
  // Field 22 of the line is index 19 after the state (field 3).
  return procStat(pid)?.[19];
}

/** The fields of /proc/<pid>/stat after the command name (the state first), or undefined where it cannot be read. */
function procStat(pid: number): string[] | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return text.slice(text.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}
