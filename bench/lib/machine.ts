/**
 * @module bench/lib/machine
 * The machine a result was taken on: CPU model and count, memory, Node version, and
 * the load average (the machine is shared, so figures must say how busy it was).
 */
import { readFileSync } from 'node:fs';
import { availableParallelism, cpus, freemem, loadavg, totalmem } from 'node:os';

export interface MachineInfo {
  readonly date: string;
  readonly cpuModel: string;
  readonly nproc: number;
  readonly memTotalGiB: number;
  readonly memFreeGiB: number;
  readonly node: string;
  readonly loadavg: string;
}

function cpuModel(): string {
  try {
    const match = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'));
    if (match?.[1]) return match[1].trim();
  } catch {
    // not Linux: fall back to os.cpus()
  }
  return cpus()[0]?.model ?? 'unknown';
}

/** The load average as /proc/loadavg shows it (1, 5, 15 min). */
export function loadAverage(): string {
  try {
    return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  } catch {
    return loadavg()
      .map((l) => l.toFixed(2))
      .join(' ');
  }
}

export function machineInfo(): MachineInfo {
  const gib = (bytes: number): number => Math.round((bytes / 2 ** 30) * 10) / 10;
  return {
    date: new Date().toISOString(),
    cpuModel: cpuModel(),
    nproc: availableParallelism(),
    memTotalGiB: gib(totalmem()),
    memFreeGiB: gib(freemem()),
    node: process.version,
    loadavg: loadAverage(),
  };
}
