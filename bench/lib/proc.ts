/**
 * @module bench/lib/proc
 * CPU time and RSS of a process, read from /proc (Linux): the CPU a process spent per
 * job depends far less on how busy a shared machine is than wall-clock rates do, so
 * the benchmarks report it beside them.
 */
import { readFileSync, readdirSync } from 'node:fs';

/** Clock ticks per second of /proc/<pid>/stat times (USER_HZ, 100 on Linux). */
const TICKS_PER_SECOND = 100;

export interface ProcSample {
  /** User plus system CPU time of every thread, ms (10 ms resolution). */
  readonly cpuMs: number;
  readonly rssBytes: number;
}

/** CPU and RSS of `pid`, or undefined when /proc cannot be read (not Linux, or it exited). */
export function readProc(pid: number): ProcSample | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name may hold spaces and parentheses: fields count from the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const utime = Number(fields[11]);
    const stime = Number(fields[12]);
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const rssKb = Number(/^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1] ?? Number.NaN);
    return { cpuMs: ((utime + stime) * 1000) / TICKS_PER_SECOND, rssBytes: rssKb * 1024 };
  } catch {
    return undefined;
  }
}

/**
 * Voluntary context switches of `pid`'s main thread (its event loop) so far: each is a
 * time it waited for something (epoll) and was woken again, so their count per job says
 * how many wake-ups a job costs that process, whatever the machine's load.
 * Undefined when /proc cannot be read.
 */
export function mainThreadWakeups(pid: number): number | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/task/${pid}/status`, 'utf8');
    return Number(/^voluntary_ctxt_switches:\s+(\d+)/m.exec(status)?.[1] ?? Number.NaN);
  } catch {
    return undefined;
  }
}

/**
 * CPU time so far of `pid`'s main thread (its event loop), ms (10 ms resolution); the rest
 * of the process's CPU is its other threads' (V8's optimizing compiler and garbage
 * collector helpers, libuv's pool). Undefined when /proc cannot be read.
 */
export function mainThreadCpuMs(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}

/** CPU time of this process so far, ms (microsecond resolution). */
export function ownCpuMs(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}

/** `pid` and every process below it (from /proc/<pid>/task/<tid>/children, Linux). */
export function processTree(pid: number): number[] {
  const found = [pid];
  for (let i = 0; i < found.length; i++) {
    const at = found[i] as number;
    let tasks: string[] = [];
    try {
      tasks = readdirSync(`/proc/${at}/task`);
    } catch {
      continue;
    }
    for (const task of tasks) {
      try {
        for (const child of readFileSync(`/proc/${at}/task/${task}/children`, 'utf8').trim().split(/\s+/)) if (child !== '') found.push(Number(child));
      } catch {
        // The task ended meanwhile.
      }
    }
  }
  return found;
}

/**
 * CPU and RSS summed over `pid` and its descendants (the worker child of --serve-api
 * since issue 24); undefined when `pid` itself cannot be read. A process that exited
 * since an earlier reading is not counted.
 */
export function readProcTree(pid: number): ProcSample | undefined {
  const own = readProc(pid);
  if (!own) return undefined;
  let cpuMs = own.cpuMs;
  let rssBytes = own.rssBytes;
  for (const member of processTree(pid).slice(1)) {
    const sample = readProc(member);
    if (!sample) continue;
    cpuMs += sample.cpuMs;
    rssBytes += sample.rssBytes;
  }
  return { cpuMs, rssBytes };
}

/** `pid`'s /proc/<pid>/smaps_rollup fields in bytes (Rss, Pss, Anonymous, Shared_Clean, ...); undefined when it cannot be read. */
export function smapsRollup(pid: number): Readonly<Record<string, number>> | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
  } catch {
    return undefined;
  }
  const fields: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const match = /^(\w+):\s+(\d+) kB/.exec(line);
    if (match?.[1] !== undefined) fields[match[1]] = Number(match[2]) * 1024;
  }
  return fields;
}

/**
 * PSS (proportional set size) summed over `pid` and its descendants, bytes: a page that two
 * of them (or any other process) share counts once, in shares, as the kernel accounts it
 * (issue 46's measure of a server's memory). NaN when `pid` itself cannot be read.
 */
export function readPssTree(pid: number): number {
  let total = 0;
  for (const [index, member] of processTree(pid).entries()) {
    const pss = smapsRollup(member)?.Pss;
    if (pss === undefined) {
      if (index === 0) return Number.NaN;
      continue;
    }
    total += pss;
  }
  return total;
}

/** Resident MB of a process by kind of mapping: `[heap]` (glibc's main arena), anonymous (V8's pages, other threads' arenas, large blocks), files. */
export interface ResidentByMapping {
  readonly heapMb: number;
  readonly anonymousMb: number;
  readonly filesMb: number;
  /** The five largest anonymous mappings, resident MB each (a thread's arena is a mapping of about 64 MB). */
  readonly largestAnonymousMb: readonly number[];
}

/** `pid`'s resident memory by mapping, from /proc/<pid>/smaps; undefined when it cannot be read. */
export function residentByMapping(pid: number): ResidentByMapping | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/smaps`, 'utf8');
  } catch {
    return undefined;
  }
  let kind = '';
  let heapKb = 0;
  let filesKb = 0;
  const anonymousKb: number[] = [];
  for (const line of text.split('\n')) {
    const mapping = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (mapping) {
      const name = mapping[1] ?? '';
      kind = name === '[heap]' ? 'heap' : name === '' ? 'anonymous' : name.startsWith('/') ? 'file' : 'other';
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (!rss) continue;
    const kb = Number(rss[1]);
    if (kind === 'heap') heapKb += kb;
    else if (kind === 'file') filesKb += kb;
    else if (kind === 'anonymous') anonymousKb.push(kb);
  }
  const mb = (kb: number) => Math.round(kb / 1024);
  return {
    heapMb: mb(heapKb),
    anonymousMb: mb(anonymousKb.reduce((sum, kb) => sum + kb, 0)),
    filesMb: mb(filesKb),
    largestAnonymousMb: anonymousKb
      .sort((a, b) => b - a)
      .slice(0, 5)
      .map(mb),
  };
}
