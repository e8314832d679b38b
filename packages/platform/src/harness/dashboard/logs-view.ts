/**
 * @module harness/dashboard/logs-view
 * What `GET /ui/api/logs` and `GET /ui/api/scale-events` answer (routes.ts): log lines,
 * oldest first, of a launched worker or of a job (the launched workers' lines that name
 * it, the job's own kept lines, the lines an in-process worker logged for it), with what
 * was dropped counted; and the launcher's scale events, a crash or an exit with its
 * worker's last stderr lines.
 */
import type { z } from 'zod';
import type { LaunchedWorkersView } from '../launcher/launched-workers-view.js';
import { byTimeThenSeq } from '../launcher/log-order.js';
import { droppedLinesText } from '../launcher/job-lines.js';
import type { LogLineView, LogsView, ScaleEventView, ScaleEventsView } from './page-views.js';
import type { DashboardSettings } from './settings.js';
import type { LogsQuerySchema, ScaleEventsQuerySchema } from './route-queries.js';

/** Characters of one log line the page gets (a line can be a megabyte of JSON). */
const LOG_LINE_CHARS = 4_000;
/** stderr lines shown with a crash or an exit (the launch command's last words: an ImportError, a missing library). */
const CRASH_STDERR_LINES = 12;

function clipLine(line: string): string {
  return line.length > LOG_LINE_CHARS ? `${line.slice(0, LOG_LINE_CHARS)}…` : line;
}

/** The launcher's scale events; none (launcher: false) without a launcher. */
export function scaleEventsView(query: z.output<typeof ScaleEventsQuerySchema>, launched: LaunchedWorkersView | undefined): ScaleEventsView {
  if (!launched?.scaleEvents) return { launcher: false, seq: 0, events: [] };
  const events = launched.scaleEvents(query.endpoint, query.max).map((event): ScaleEventView => {
    if ((event.kind !== 'crash' && event.kind !== 'exit') || event.workerId === undefined) return event;
    const stderr = launched
      .logs(event.endpointId, 1_000, event.workerId)
      // A worker id names one process: its stderr lines are its own, read before or just after it ended.
      .filter((line) => line.stream === 'stderr')
      .slice(-CRASH_STDERR_LINES)
      .map((line) => clipLine(line.line));
    return stderr.length > 0 ? { ...event, stderr } : event;
  });
  return { launcher: true, seq: launched.scaleEventCount ?? 0, events };
}

interface JobLines {
  lines: LogLineView[];
  dropped: string | undefined;
  droppedLines: number;
}

/**
 * A job's lines: those of launched workers that name it (ctx.log binds requestId; the
 * runtime's job lines carry it), the job's own lines kept by bytes and time past the
 * endpoint's ring (launcher/job-lines.ts: the same entries, merged once), and those an
 * in-process worker logged for it (job-log-tap.ts).
 */
function jobLines(
  endpointId: string,
  jobId: string,
  ring: LogLineView[],
  launched: LaunchedWorkersView | undefined,
  jobLogs: DashboardSettings['jobLogs'],
): JobLines {
  let lines = ring.filter((line) => line.line.includes(jobId));
  let dropped: string | undefined;
  let droppedLines = 0;
  const kept = launched?.jobLogs?.(endpointId, jobId);
  if (kept !== undefined) {
    const seen = new Set(lines);
    const keptCount = kept.lines.length;
    lines = [...kept.lines.filter((line) => !seen.has(line)), ...lines];
    dropped = kept.dropped;
    if (kept.droppedLines !== undefined) {
      // Lines the job's own store dropped may still be in the endpoint's ring, shown above: only those in neither are missing.
      const missing = keptCount + kept.droppedLines.count - lines.length;
      dropped = missing > 0 ? droppedLinesText(missing, kept.droppedLines.because) : undefined;
      droppedLines += Math.max(0, missing);
    } else if (kept.goneLines !== undefined) droppedLines += Math.max(0, kept.goneLines - lines.length);
  }
  // What the in-process buffer dropped of this job: counted and said, as the launcher's (job-log-tap.ts).
  const ownDropped = jobLogs?.droppedFor(jobId);
  if (ownDropped !== undefined) {
    dropped = dropped === undefined ? ownDropped.why : `${dropped}; ${ownDropped.why}`;
    droppedLines += ownDropped.lines;
  }
  const own = (jobLogs?.forJob(jobId) ?? []).map((line) => ({ at: line.at, seq: line.seq, workerId: 'in-process', stream: line.level, line: line.line }));
  return { lines: [...lines, ...own], dropped, droppedLines };
}

/** The log lines a query asks for, oldest first, the last `max`. */
export function logsView(query: z.output<typeof LogsQuerySchema>, launched: LaunchedWorkersView | undefined, jobLogs: DashboardSettings['jobLogs']): LogsView {
  const ring: LogLineView[] = launched ? launched.logs(query.endpoint, 1_000, query.worker) : [];
  const { lines, dropped, droppedLines } =
    query.job !== undefined ? jobLines(query.endpoint, query.job, ring, launched, jobLogs) : { lines: ring, dropped: undefined, droppedLines: 0 };
  // By time, then by capture order (launcher/log-order.ts): lines of one millisecond as they were read, whichever store kept them.
  const sorted = [...lines].sort(byTimeThenSeq);
  return {
    launcher: launched !== undefined,
    inProcess: jobLogs !== undefined,
    lines: sorted.slice(-query.max).map((line) => ({ at: line.at, seq: line.seq, workerId: line.workerId, stream: line.stream, line: clipLine(line.line) })),
    ...(dropped !== undefined ? { dropped, droppedLines } : {}),
  };
}
