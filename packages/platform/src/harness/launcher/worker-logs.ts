/**
 * @module harness/launcher/worker-logs
 * The output of launched workers, kept per endpoint: the last `limit` lines, each
 * with its worker id, stream, time and capture sequence number (log-order.ts: lines of
 * one millisecond keep the order they were read in). `GET /v2/{endpoint}/logs` reads
 * them; the launcher also writes every line to the harness log with the worker id.
 */
import { nextLogSeq } from './log-order.js';

export interface WorkerLogLine {
  /** Epoch ms the harness read the line. */
  at: number;
  workerId: string;
  stream: 'stdout' | 'stderr' | 'launcher';
  line: string;
  /** Capture sequence number (log-order.ts): the order lines were read in, across every source of this process. */
  seq: number;
}

/** A line as captured, before the store numbers it. */
export type CapturedLogLine = Omit<WorkerLogLine, 'seq'>;

export class WorkerLogs {
  readonly #limit: number;
  readonly #byEndpoint = new Map<string, WorkerLogLine[]>();

  /** Keep the last `limit` lines per endpoint (default 1000). */
  constructor(limit = 1_000) {
    this.#limit = limit;
  }

  /** Keep `captured` with the next sequence number; answers the line as kept. */
  add(endpointId: string, captured: CapturedLogLine): WorkerLogLine {
    // A literal, not a spread: a spread copy cost several times as much a line (a worker can write thousands a second).
    const entry: WorkerLogLine = { at: captured.at, workerId: captured.workerId, stream: captured.stream, line: captured.line, seq: nextLogSeq() };
    let lines = this.#byEndpoint.get(endpointId);
    if (!lines) {
      lines = [];
      this.#byEndpoint.set(endpointId, lines);
    }
    lines.push(entry);
    // Trimmed once it holds twice the limit, not at each line: one move of `limit` lines per `limit` lines added.
    if (lines.length >= 2 * this.#limit) lines.splice(0, lines.length - this.#limit);
    return entry;
  }

  /** The last `max` lines of the endpoint (oldest first), optionally of one worker. */
  read(endpointId: string, max = this.#limit, workerId?: string): WorkerLogLine[] {
    const kept = this.#byEndpoint.get(endpointId) ?? [];
    const last = kept.slice(Math.max(0, kept.length - this.#limit));
    const lines = workerId === undefined ? last : last.filter((entry) => entry.workerId === workerId);
    return lines.slice(Math.max(0, lines.length - max));
  }
}
