/**
 * @module harness/launcher/process-records
 * The worker processes a harness launched, on disk: `<data dir>/launched-processes/
 * <host>-<harness pid>.json` lists each running worker's process group (its shell's pid
 * and start time), rewritten as workers start and exit, removed on a clean close. A
 * harness that starts on the same host stops what a harness that no longer runs left
 * there (SIGKILLed: it could not stop its workers): SIGTERM to each group still running,
 * SIGKILL after the shutdown deadline, then the file goes. Our own SDK workers have
 * already exited by then (SW_HARNESS_PID, settings/launched-worker.ts); this catches any
 * other command (a Python worker, a shell script).
 *
 *     const records = new ProcessRecords(dataDir);
 *     const stopped = await records.stopLeftovers(10_000);   // at start
 *     new Launcher(options, { ..., processRecords: records });
 */
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import * as z from 'zod';
import { sleep, systemClock } from 'serverless-worker/internal';
import { groupRuns, processRuns, processStartTicks } from './process-liveness.js';

const RecordSchema = z.object({
  workerId: z.string(),
  endpointId: z.string(),
  /** The worker's shell: its pid is the process group's id (it was started detached). */
  pid: z.number().int().positive(),
  /** Its start time (/proc), so a reused pid is never taken for it; absent off Linux. */
  startTicks: z.string().optional(),
});
export type ProcessRecord = z.infer<typeof RecordSchema>;

const FileSchema = z.object({
  host: z.string(),
  harnessPid: z.number().int().positive(),
  harnessStartTicks: z.string().optional(),
  workers: z.array(RecordSchema),
});

/** How often a stopped leftover group is looked at until it is gone, ms. */
const LEFTOVER_POLL_MS = 100;

/** A leftover worker this harness stopped. */
export interface StoppedLeftover extends ProcessRecord {
  /** Whether it outlived the deadline and got SIGKILL. */
  killed: boolean;
}

export class ProcessRecords {
  readonly folder: string;
  readonly #file: string;
  readonly #workers = new Map<string, ProcessRecord>();

  constructor(dataDir: string) {
    this.folder = join(dataDir, 'launched-processes');
    this.#file = join(this.folder, `${fileHost()}-${process.pid}.json`);
  }

  /** A worker process started: its group is recorded. */
  add(record: Omit<ProcessRecord, 'startTicks'>): void {
    const startTicks = processStartTicks(record.pid);
    this.#workers.set(record.workerId, { ...record, ...(startTicks !== undefined ? { startTicks } : {}) });
    this.#write();
  }

  /** It exited: no longer recorded. */
  remove(workerId: string): void {
    if (this.#workers.delete(workerId)) this.#write();
  }

  /** Every worker stopped (a clean close): the file goes. */
  close(): void {
    this.#workers.clear();
    rmSync(this.#file, { force: true });
  }

  /**
   * Stop the worker process groups that harnesses of this host which no longer run left
   * behind: SIGTERM, then SIGKILL after `deadlineMs`. Answers what was stopped.
   */
  async stopLeftovers(deadlineMs: number): Promise<StoppedLeftover[]> {
    const leftovers: Array<{ file: string; workers: ProcessRecord[] }> = [];
    let names: string[] = [];
    try {
      names = readdirSync(this.folder).filter((name) => name.endsWith('.json'));
    } catch {
      return [];
    }
    for (const name of names) {
      const file = join(this.folder, name);
      const parsed = readRecordFile(file);
      if (!parsed || parsed.host !== hostname() || parsed.harnessPid === process.pid || harnessRuns(parsed.harnessPid, parsed.harnessStartTicks)) continue;
      leftovers.push({ file, workers: parsed.workers.filter(isOurGroup) });
    }
    const stopped = leftovers.flatMap((leftover) => leftover.workers);
    for (const worker of stopped) signalGroup(worker.pid, 'SIGTERM');
    // A group once seen empty stays gone: its id may go to another process meanwhile (pids wrap fast on a busy machine).
    const gone = new Set<number>();
    const running = (): ProcessRecord[] => {
      for (const worker of stopped) if (!gone.has(worker.pid) && !groupRuns(worker.pid)) gone.add(worker.pid);
      return stopped.filter((worker) => !gone.has(worker.pid));
    };
    const until = systemClock.now() + deadlineMs;
    while (running().length > 0 && systemClock.now() < until) await sleep(LEFTOVER_POLL_MS);
    const left = new Set(running().map((worker) => worker.pid));
    const answer = stopped.map((worker) => {
      const killed = left.has(worker.pid);
      if (killed) signalGroup(worker.pid, 'SIGKILL');
      return { ...worker, killed };
    });
    for (const leftover of leftovers) rmSync(leftover.file, { force: true });
    return answer;
  }

  #write(): void {
    mkdirSync(this.folder, { recursive: true });
    const content = { host: hostname(), harnessPid: process.pid, harnessStartTicks: OWN_START_TICKS, workers: [...this.#workers.values()] };
    writeFileSync(`${this.#file}.tmp`, JSON.stringify(content));
    // Renamed into place: a harness reading it never sees half a file.
    renameSync(`${this.#file}.tmp`, this.#file);
  }
}

/** This harness's start time, recorded beside its pid. */
const OWN_START_TICKS = processStartTicks(process.pid);

/** Whether the harness that wrote a record still runs (its pid, with its start time where recorded). */
function harnessRuns(pid: number, startTicks: string | undefined): boolean {
  return processRuns(pid) && (startTicks === undefined || processStartTicks(pid) === startTicks);
}

function fileHost(): string {
  return hostname().replace(/[^A-Za-z0-9_.-]/g, '_');
}

function readRecordFile(file: string): z.infer<typeof FileSchema> | undefined {
  try {
    const parsed = FileSchema.safeParse(JSON.parse(readFileSync(file, 'utf8')));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether the recorded group is still the worker's: the shell runs with its recorded
 * start time, or it is gone while processes of its group remain (a group id is not
 * reused while the group has members). A pid reused by another process is left alone.
 */
function isOurGroup(record: ProcessRecord): boolean {
  if (processRuns(record.pid)) return record.startTicks === undefined || processStartTicks(record.pid) === record.startTicks;
  return groupRuns(record.pid);
}

function signalGroup(pgid: number, signal: 'SIGTERM' | 'SIGKILL'): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // Gone meanwhile.
  }
}
