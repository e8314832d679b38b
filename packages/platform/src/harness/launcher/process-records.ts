/**
 * @module harness/launcher/process-records
 * The worker processes a harness launched, on disk: `<data dir>/launched-processes/
 * <host>-<harness pid>.json` lists each running worker's process group (its shell's pid
 * and start time), rewritten as workers start and exit, removed on a clean close. A
 * harness that starts on the same host, with or without a launcher of its own, stops what
 * a harness that no longer runs left there (SIGKILLed: it could not stop its workers):
 * SIGTERM to each group still running, SIGKILL after the shutdown deadline, then the
 * file goes. It does so once it listens (compose.ts): an SDK worker whose harness is gone
 * (SW_HARNESS_PID) keeps its finished results for a harness on the same address and
 * delivers them while it drains; any other command (a Python worker, a shell script)
 * just stops.
 *
 *     const records = new ProcessRecords(dataDir);
 *     new Launcher(options, { ..., processRecords: records });
 *     const stopped = await records.stopLeftovers(40_000);   // once the server listens
 */
import { hostname } from 'node:os';
import { join } from 'node:path';
import * as z from 'zod';
import { sleep, systemClock } from 'serverless-worker/internal';
import { groupRuns, processRuns, processStartTicks } from './process-liveness.js';
const { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } = process.getBuiltinModule('node:fs');

const RecordSchema = z.object({
  workerId: z.string(),
  endpointId: z.string(),
  /** The worker's shell: its pid is the process group's id (it was started detached). */
  pid: z.number().int().positive(),
  /** Its start time (/proc), so a reused pid is never taken for it; absent off Linux. */
  startTicks: z.string().optional(),
  /**
   * A leftover: when a harness sent it SIGTERM (epoch ms), recorded before the signal. A
   * harness started after that one died too does not send it again (a second SIGTERM ends
   * an SDK worker at once, dropping the results it is delivering): it waits out the same
   * deadline, then SIGKILL.
   */
  stopSentAt: z.number().optional(),
});
export type ProcessRecord = z.infer<typeof RecordSchema>;

const FileSchema = z.object({
  host: z.string(),
  harnessPid: z.number().int().positive(),
  harnessStartTicks: z.string().optional(),
  workers: z.array(RecordSchema),
});
type RecordFile = z.infer<typeof FileSchema>;

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
    const leftovers = this.#leftoverFiles();
    const now = systemClock.now();
    for (const leftover of leftovers) {
      const told = leftover.workers.map((worker) => ({ ...worker, stopSentAt: worker.stopSentAt ?? now }));
      // Written before the signals: if this harness dies now, the next one knows they were sent.
      if (leftover.workers.some((worker) => worker.stopSentAt === undefined)) writeAtomically(leftover.file, { ...leftover.content, workers: told });
      for (const worker of leftover.workers) if (worker.stopSentAt === undefined) signalGroup(worker.pid, 'SIGTERM');
      leftover.workers = told;
    }
    const stopped = leftovers.flatMap((leftover) => leftover.workers);
    const until = (worker: ProcessRecord): number => (worker.stopSentAt ?? now) + deadlineMs;
    // A group once seen empty stays gone: its id may go to another process meanwhile (pids wrap fast on a busy machine).
    const gone = new Set<number>();
    const killed = new Set<number>();
    const running = (): ProcessRecord[] => {
      for (const worker of stopped) if (!gone.has(worker.pid) && !groupRuns(worker.pid)) gone.add(worker.pid);
      return stopped.filter((worker) => !gone.has(worker.pid));
    };
    for (let left = running(); left.length > 0; left = running()) {
      // Each group past its deadline (counted from the SIGTERM, whichever harness sent it) gets SIGKILL.
      for (const worker of left) {
        if (killed.has(worker.pid) || systemClock.now() < until(worker)) continue;
        killed.add(worker.pid);
        signalGroup(worker.pid, 'SIGKILL');
      }
      if (left.every((worker) => killed.has(worker.pid))) break;
      await sleep(LEFTOVER_POLL_MS);
    }
    for (const leftover of leftovers) rmSync(leftover.file, { force: true });
    return stopped.map((worker) => ({ ...worker, killed: killed.has(worker.pid) }));
  }

  /** The worker groups harnesses of this host that no longer run left behind, still running (nothing is signalled). */
  leftovers(): ProcessRecord[] {
    return this.#leftoverFiles().flatMap((leftover) => leftover.workers);
  }

  #leftoverFiles(): Array<{ file: string; content: RecordFile; workers: ProcessRecord[] }> {
    const leftovers: Array<{ file: string; content: RecordFile; workers: ProcessRecord[] }> = [];
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
      leftovers.push({ file, content: parsed, workers: parsed.workers.filter(isOurGroup) });
    }
    return leftovers;
  }

  #write(): void {
    mkdirSync(this.folder, { recursive: true });
    writeAtomically(this.#file, { host: hostname(), harnessPid: process.pid, harnessStartTicks: OWN_START_TICKS, workers: [...this.#workers.values()] });
  }
}

/** Written beside it and renamed into place: a harness reading it never sees half a file. */
function writeAtomically(file: string, content: RecordFile): void {
  writeFileSync(`${file}.tmp`, JSON.stringify(content));
  renameSync(`${file}.tmp`, file);
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

function readRecordFile(file: string): RecordFile | undefined {
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
