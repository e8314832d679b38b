/**
 * @module bench/children/soak-worker
 * The worker bench/soak.ts has the harness's launcher run (one process per worker, the
 * worker API variables from the launcher). A job sleeps input.ms (stopping when its
 * signal aborts: executionTimeout, cancel, ttl) and answers {runId, workerId}. Every run
 * appends one line to SOAK_RUNS_FILE when it starts and one when its handler returns
 * (`{"event":"start"|"end","jobId","runId","workerId","pid","harnessPid","at"}`; a short write with
 * O_APPEND lands whole however many processes append at once): the soak counts a job
 * whose handler ran to the end twice from this file. SOAK_CONCURRENCY jobs at once
 * (default 4).
 */
import { randomUUID } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import { serve } from '../../src/index.js';

const RUNS_FILE = process.env.SOAK_RUNS_FILE;
if (RUNS_FILE === undefined || RUNS_FILE === '') throw new Error('SOAK_RUNS_FILE must name the file each run is appended to');

function record(event: 'start' | 'end', jobId: string, runId: string, workerId: string): void {
  appendFileSync(
    RUNS_FILE as string,
    `${JSON.stringify({ event, jobId, runId, workerId, pid: process.pid, harnessPid: Number(process.env.SW_HARNESS_PID), at: Date.now() })}\n`,
  );
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason as Error);
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      reject(signal.reason as Error);
    });
  });
}

await serve(
  async (job, ctx) => {
    const runId = randomUUID();
    record('start', job.id, runId, ctx.workerId);
    await sleep(Number((job.input as { ms?: unknown }).ms ?? 0), ctx.signal);
    record('end', job.id, runId, ctx.workerId);
    return { runId, workerId: ctx.workerId };
  },
  { concurrency: Number(process.env.SOAK_CONCURRENCY ?? 4), shutdownTimeoutMs: 5_000 },
);
