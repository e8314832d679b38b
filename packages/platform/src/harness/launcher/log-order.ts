/**
 * @module harness/launcher/log-order
 * The order of captured log lines. A line's time is a millisecond, and a worker writes
 * many lines in one (a burst of `ctx.log` calls, a stack trace): sorted by time alone,
 * lines of one millisecond came out in any order once lines of several sources were
 * merged (a job's kept lines with the endpoint's ring, an in-process worker's with the
 * launched workers'). Each line therefore gets a sequence number where the harness
 * captures it (the launcher's WorkerLogs, the dashboard's JobLogBuffer), from one
 * counter of this process: lines are shown by (time, sequence), so lines of one
 * millisecond keep the order in which they were read, whatever store they went through.
 * The counter starts again at 1 when the harness restarts (the lines are kept in memory
 * only, and go with it). It lives beside the launcher's store, where the dashboard may
 * import it (docs/architecture.md).
 */

let last = 0;

/** The next capture sequence number of this process (1, 2, 3, ...). */
export function nextLogSeq(): number {
  last += 1;
  return last;
}

/** A captured line's place: its time (epoch ms) and its capture sequence number. */
export interface LogOrder {
  readonly at: number;
  readonly seq: number;
}

/** Compare two lines by time, then by capture order (Array.prototype.sort's comparator). */
export function byTimeThenSeq(a: LogOrder, b: LogOrder): number {
  return a.at - b.at || a.seq - b.seq;
}
