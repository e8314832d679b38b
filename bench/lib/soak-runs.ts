/**
 * @module bench/lib/soak-runs
 * What the soak's workers wrote (bench/children/soak-worker.ts: a line when a run starts
 * and one when its handler returns) read back: the jobs whose handler ran to its end more
 * than once, split by whether a fault explains it. A run whose worker or harness died
 * before its result was delivered could not deliver it (the worker posts it after the
 * handler returns; a launched worker exits within a second of its harness's death; a result post the store refused while PostgreSQL was down is retried with
 * backoff, for minutes, by a worker that dies with its harness meanwhile), so the job went
 * back to the queue as designed and ran again: at least once, not a second result
 * accepted. Such a run ended, and its worker or its harness (SIGKILLed, or exited by
 * itself) died before the job's next run started. Any other second run is unexplained.
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

/** A launched worker notices its harness is gone within this long (it checks every second), ms. */
const HARNESS_GONE_NOTICE_MS = 1_500;

export interface RunsSummary {
  /** The runIds of each job's runs that reached their end, in order. */
  readonly ends: Map<string, string[]>;
  /** Jobs started more than once (a worker or harness died under them, a timeout, ...). */
  readonly startedAgain: Set<string>;
  /** Jobs whose handler ran to its end more than once, each earlier end followed by the death of its worker or harness before the next run. */
  readonly runTwiceResultLost: string[];
  readonly runTwiceUnexplained: string[];
}

/** Whether the worker or the harness of `end` died after it and before `nextStart` (its result could not be delivered). */
function explained(end: RunLine, nextStart: number, kills: readonly Kill[]): boolean {
  return kills.some(
    (kill) =>
      (kill.what === 'worker' && kill.pid === end.pid && kill.at >= end.at && kill.at <= nextStart) ||
      (kill.what === 'harness' && kill.pid === end.harnessPid && kill.at >= end.at - HARNESS_GONE_NOTICE_MS && kill.at <= nextStart),
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
  const starts = new Map<string, number[]>();
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const run = JSON.parse(line) as RunLine;
    if (run.event === 'start') starts.set(run.jobId, [...(starts.get(run.jobId) ?? []), run.at]);
    else endLines.set(run.jobId, [...(endLines.get(run.jobId) ?? []), run]);
  }
  const nextStart = (jobId: string, after: number): number => (starts.get(jobId) ?? []).find((at) => at > after) ?? Number.POSITIVE_INFINITY;
  const runTwiceResultLost: string[] = [];
  const runTwiceUnexplained: string[] = [];
  for (const [jobId, runs] of endLines) {
    if (runs.length < 2) continue;
    (runs.slice(0, -1).every((run) => explained(run, nextStart(jobId, run.at), kills)) ? runTwiceResultLost : runTwiceUnexplained).push(jobId);
  }
  return {
    ends: new Map([...endLines].map(([jobId, runs]) => [jobId, runs.map((run) => run.runId)])),
    startedAgain: new Set([...starts].filter(([, at]) => at.length > 1).map(([jobId]) => jobId)),
    runTwiceResultLost,
    runTwiceUnexplained,
  };
}
