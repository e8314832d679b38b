/**
 * @module local/child-log-lines
 * The supervised worker's stderr under `--serve-api`: each line goes on to this
 * process's stderr as it came, and a JSON log line bound to a job (`requestId`, what
 * `ctx.log` and the runtime's job lines carry) is also kept in the dashboard's
 * JobLogBuffer, so the job page shows the job's own lines as it did when the worker ran
 * in this process. The child logs JSON (RUNPOD_ENDPOINT_ID is set in its environment).
 */
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import pino from 'pino';
import { systemClock } from 'serverless-worker/internal';
import type { JobLogBuffer } from '../harness/dashboard/job-log-tap.js';

/** Fields every line carries: not repeated after the message on the job page. */
const BASE_FIELDS = new Set(['level', 'time', 'pid', 'hostname', 'name', 'msg', 'requestId']);

/** One JSON log line bound to a job, as the job page shows it; undefined for any other line. */
export function jobLineOf(text: string): { jobId: string; at: number; level: string; line: string } | undefined {
  if (!text.startsWith('{')) return undefined;
  let record: unknown;
  try {
    record = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (record === null || typeof record !== 'object') return undefined;
  const fields = record as Record<string, unknown>;
  if (typeof fields.requestId !== 'string') return undefined;
  const at = typeof fields.time === 'string' ? Date.parse(fields.time) : typeof fields.time === 'number' ? fields.time : systemClock.now();
  const level = typeof fields.level === 'number' ? (pino.levels.labels[fields.level] ?? String(fields.level)) : String(fields.level ?? 'info');
  const rest = Object.fromEntries(Object.entries(fields).filter(([key]) => !BASE_FIELDS.has(key)));
  const message = typeof fields.msg === 'string' ? fields.msg : '';
  const extra = Object.keys(rest).length > 0 ? JSON.stringify(rest) : '';
  return { jobId: fields.requestId, at: Number.isFinite(at) ? at : systemClock.now(), level, line: [message, extra].filter((part) => part !== '').join(' ') };
}

/**
 * Read `stream` line by line: the lines that came in together (one read of the pipe) to
 * `forward` in one call, and job lines into `buffer`. One call, so one write: this
 * process's own log lines are written by pino's asynchronous destination from a thread
 * of their own, and one of them landed between the lines of a start-up error the child
 * had written at once (its code, its fix, the hint) when each line went alone.
 */
export function relayChildLog(stream: Readable, buffer: JobLogBuffer | undefined, forward: (lines: readonly string[]) => void): void {
  const lines = createInterface({ input: stream, crlfDelay: Infinity });
  let together: string[] = [];
  lines.on('line', (text) => {
    // readline hands out the lines of one read in one turn: they go on once it is over.
    if (together.length === 0) {
      queueMicrotask(() => {
        const out = together;
        together = [];
        forward(out);
      });
    }
    together.push(text);
    const job = buffer ? jobLineOf(text) : undefined;
    if (job) buffer?.add(job.jobId, { at: job.at, level: job.level, line: job.line });
  });
}
