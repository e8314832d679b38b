/**
 * @module bench/lib/soak-runs
 * What the soak's workers wrote (bench/children/soak-worker.ts: a line when a run starts
 * and one when its handler returns) read back: the jobs whose handler ran to its end more
 * than once, split by whether a fault explains it. A run that ended just before its
 * worker or its harness was SIGKILLed could not deliver its result (the worker posts it
 * after the handler returns; a launched worker exits within a second of its harness's
 * death), so the job went back to the queue as designed and ran again: at least once,
 * not a second result accepted. Any other second run is unexplained.
 */
import { readFileSync } from 'node:fs';

interface RunLine {
  readonly event: 'start' | 'end';
  readonly jobId: string;
  readonly runId: string;
  readonly pid: number;
  readonly harnessPid: number;
  readonly at: number;
}

export interface Kill {
  readonly pid: number;
  readonly at: number;
  readonly what: 'worker' | 'harness';
}

/** A worker posts its result this soon after its handler returns (a loaded machine included), ms. */
const RESULT_POST_WINDOW_MS = 3_000;
/** A launched worker notices its harness is gone within this long (it checks every second), ms. */
const HARNESS_GONE_NOTICE_MS = 1_500;

export interface RunsSummary {
  /** The runIds of each job's runs that reached their end, in order. */
  readonly ends: Map<string, string[]>;
  /** Jobs started more than once (a worker or harness died under them, a timeout, ...). */
  readonly startedAgain: Set<string>;
  /** Jobs whose handler ran to its end more than once, each earlier end followed by the SIGKILL of its worker or harness. */
  readonly runTwiceResultLost: string[];
  readonly runTwiceUnexplained: string[];
}

function explained(end: RunLine, kills: readonly Kill[]): boolean {
  return kills.some(
    (kill) =>
      (kill.what === 'worker' && kill.pid === end.pid && kill.at >= end.at && kill.at <= end.at + RESULT_POST_WINDOW_MS) ||
      (kill.what === 'harness' && kill.pid === end.harnessPid && kill.at >= end.at - HARNESS_GONE_NOTICE_MS && kill.at <= end.at + RESULT_POST_WINDOW_MS),
  );
}

/** Read the runs file (absent: no run) against the kills the soak made. */
export function summariseRuns(file: string, kills: readonly Kill[]): RunsSummary {
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    // No job ran.
  }
  const endLines = new Map<string, RunLine[]>();
  const starts = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const run = JSON.parse(line) as RunLine;
    if (run.event === 'start') starts.set(run.jobId, (starts.get(run.jobId) ?? 0) + 1);
    else endLines.set(run.jobId, [...(endLines.get(run.jobId) ?? []), run]);
  }
  const runTwiceResultLost: string[] = [];
  const runTwiceUnexplained: string[] = [];
  for (const [jobId, runs] of endLines) {
    if (runs.length < 2) continue;
    (runs.slice(0, -1).every((run) => explained(run, kills)) ? runTwiceResultLost : runTwiceUnexplained).push(jobId);
  }
  return {
    ends: new Map([...endLines].map(([jobId, runs]) => [jobId, runs.map((run) => run.runId)])),
    startedAgain: new Set([...starts].filter(([, count]) => count > 1).map(([jobId]) => jobId)),
    runTwiceResultLost,
    runTwiceUnexplained,
  };
}
