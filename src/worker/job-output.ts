/**
 * @module worker/job-output
 * What a handler prints (console.*, process.stdout.write, process.stderr.write) named
 * with the job it runs for, in every mode. Log lines (ctx.log, the runtime's) carry
 * `requestId` and reach a job's logs (the dashboard's job page, `/ui/api/logs?job=`, the
 * CLI's `logs`); a plain printed line did not, though the runtime knows which job runs:
 * each run executes inside `jobScope` (stray-errors.ts), which AsyncLocalStorage carries
 * through the handler's promises and timers, so concurrent jobs keep their own lines.
 *
 * While code of a job runs, each line written to stdout or stderr is written instead, on
 * the same stream and at once (so no line moves), as a log line of that job: a JSON object
 * a line (pino's shape: level, time, pid, name, requestId, stream, msg) where the logger
 * writes JSON (on the platform: RUNPOD_ENDPOINT_ID set; or off a terminal), else the same
 * object rendered as the pretty logger renders its lines. stdout is level info, stderr
 * level error (a console.warn and a console.error both land on stderr and cannot be told
 * apart there). A line that is a JSON object already (the handler's own logger, an event
 * line a tool reads) stays one, with the job's `requestId` added where it names none. Output outside any job (start-up prints, the dry run's record) is written
 * as it always was. A partial line (a write without a newline) is a line of its own: held
 * back, it could be overtaken by a later line of another stream or job.
 */
import { hostname } from 'node:os';
import { systemClock } from '../clock/index.js';
import { jsonLineFormatter, rawWrite, type CreateLoggerOptions } from '../log/index.js';
import { jobScope } from './stray-errors.js';

type Write = typeof process.stdout.write;
type StreamName = 'stdout' | 'stderr';

/** pino's levels for a printed line: stdout info, stderr error. */
const LEVEL_OF: Record<StreamName, number> = { stdout: 30, stderr: 50 };

let installed = false;

/** The record of one printed line of a job, as JSON text (no newline). */
export function jobOutputRecord(line: string, stream: StreamName, jobId: string, at: number, attempt?: number): string {
  return JSON.stringify({
    level: LEVEL_OF[stream],
    time: new Date(at).toISOString(),
    pid: process.pid,
    hostname: hostname(),
    name: 'serverless-worker',
    requestId: jobId,
    ...(attempt !== undefined ? { attempt } : {}),
    stream,
    msg: line,
  });
}

/**
 * A printed line that is a JSON object already (a handler's own structured log, an event
 * line): kept as it is, with `"requestId"` added at its end when it names no job
 * (`requestId`, `jobId` or `job_id`), so that what reads it as JSON still can; undefined
 * for any other line.
 */
export function ownJsonLine(line: string, jobId: string): string | undefined {
  const trimmed = line.trimEnd();
  if (!trimmed.startsWith('{') || !trimmed.endsWith('}')) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(trimmed);
  } catch {
    return undefined;
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return undefined;
  if ('requestId' in parsed || 'jobId' in parsed || 'job_id' in parsed) return trimmed;
  const body = trimmed.slice(0, -1).trimEnd();
  return `${body}${body === '{' ? '' : ','}"requestId":${JSON.stringify(jobId)}}`;
}

/** The lines of one write: split at newlines; the empty piece after a final newline is no line. */
function linesOf(text: string): string[] {
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/**
 * Attribute what job code prints to its job, from now on, for this process (serve()
 * calls it once per mode; later calls change nothing). `options`: the logger's, for
 * its format (JSON or pretty).
 */
export function attributeJobOutput(options: CreateLoggerOptions = {}): void {
  if (installed) return;
  installed = true;
  // undefined where the logger writes JSON (on the platform, off a terminal), or pino-pretty is not at hand.
  const pretty = jsonLineFormatter(options);
  for (const name of ['stdout', 'stderr'] as const) {
    const stream = process[name];
    const write = rawWrite[name];
    const patched = function (this: unknown, chunk: unknown, encoding?: unknown, callback?: unknown): boolean {
      const scope = jobScope.getStore();
      if (scope === undefined) return (write as (...args: unknown[]) => boolean)(chunk, encoding, callback);
      const text =
        typeof chunk === 'string'
          ? chunk
          : chunk instanceof Uint8Array
            ? // Bytes are text as UTF-8 (Node ignores the encoding argument of a Buffer write).
              Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).toString('utf8')
            : String(chunk);
      const at = systemClock.now();
      const out = linesOf(text)
        .map((line) => {
          const own = ownJsonLine(line, scope.jobId);
          if (own !== undefined) return `${own}\n`;
          const record = jobOutputRecord(line, name, scope.jobId, at, scope.attempt);
          return pretty ? pretty(record) : `${record}\n`;
        })
        .join('');
      const done = typeof encoding === 'function' ? encoding : callback;
      return typeof done === 'function' ? write(out, done as (error?: Error | null) => void) : write(out);
    };
    stream.write = patched as Write;
  }
}
