/**
 * @module cli/commands/logs
 * `serverless-worker logs <endpointId> [--job <id>] [--worker <id>] [--follow]`: log
 * lines from a harness, as its dashboard shows them (GET /ui/api/logs): the lines of the
 * workers its launcher runs (stdout, stderr), of one worker, or those naming one job
 * (with the lines an in-process worker logged for it). One line each on stdout, oldest
 * first (by time, then by the order the harness captured them: lines of one millisecond as
 * they were written). On a terminal (or with `--pretty`): time, worker, stream, and a pino
 * JSON line read as its level, message and fields (log-line-text.ts), any other line as
 * written; piped or redirected (or with `--json`): each line as a JSON object (with `seq`,
 * its capture number), for `jq`.
 * Lines of the job the harness no longer keeps are counted on stderr, with why.
 * `--follow` reads again every `--interval` ms and prints only the lines not printed yet,
 * until interrupted (Ctrl+C).
 */
import type { Command } from 'commander';
import { sleep } from 'serverless-worker/internal';
import { managementClientFromEnv } from '../../harness/management/management-client.js';
import { HarnessReads, type LogLineReply, type LogsReply } from './harness-reads.js';
import { prettyLogLine } from './log-line-text.js';
import { integerFlag } from './management-flags.js';
import { cliOutput, withConnection, type ConnectionFlags } from './management-output.js';
import { outputMode, withOutputFlags, type OutputFlags } from './output-mode.js';

/** Lines asked for on each read (the harness keeps the last 1 000 per endpoint). */
const MAX_LINES = 1_000;
export const DEFAULT_FOLLOW_INTERVAL_MS = 1_000;

interface LogsFlags extends ConnectionFlags, OutputFlags {
  job?: string;
  worker?: string;
  follow?: boolean;
  tail?: string;
  interval?: string;
}

/** What the CLI says of a job's lines the harness no longer keeps: how many, and why. */
export function droppedNote(reply: LogsReply): string {
  const count =
    reply.droppedLines !== undefined
      ? `${reply.droppedLines} line${reply.droppedLines === 1 ? '' : 's'} of this job no longer kept`
      : 'lines of this job no longer kept';
  return `serverless-worker: ${count}: ${reply.dropped ?? 'dropped'}`;
}

const keyOf = (line: LogLineReply): string => `${line.workerId}\u0000${line.stream}\u0000${line.line}`;

/**
 * What is new in each read of a followed log: the reads overlap (each is the last lines).
 * A harness numbers each line as it captures it (harness/launcher/log-order.ts), so a line is new
 * when its number is above the highest printed: exact, for lines of one millisecond too, and
 * for a line read after one of a later time (an in-process worker's lines carry the time
 * it logged them). A read whose highest number is below the highest printed comes from a
 * restarted harness (its numbers start again): all its lines are new. A harness older than
 * the numbers: a line is new when it is later than the last printed, or of that same
 * millisecond and not printed yet (counted, so two equal lines of one millisecond both print).
 */
export class NewLines {
  #lastSeq = 0;
  #lastAt = Number.NEGATIVE_INFINITY;
  #printedAtLast = new Map<string, number>();

  take(lines: readonly LogLineReply[]): LogLineReply[] {
    if (lines.length > 0 && lines.every((line) => line.seq !== undefined)) return this.#bySeq(lines);
    return this.#byTime(lines);
  }

  #bySeq(lines: readonly LogLineReply[]): LogLineReply[] {
    const highest = Math.max(...lines.map((line) => line.seq ?? 0));
    if (highest < this.#lastSeq) this.#lastSeq = 0;
    const fresh = lines.filter((line) => (line.seq ?? 0) > this.#lastSeq);
    this.#lastSeq = Math.max(this.#lastSeq, highest);
    return fresh;
  }

  #byTime(lines: readonly LogLineReply[]): LogLineReply[] {
    const fresh: LogLineReply[] = [];
    const seenAtLast = new Map<string, number>();
    for (const line of lines) {
      if (line.at < this.#lastAt) continue;
      if (line.at === this.#lastAt) {
        const key = keyOf(line);
        const seen = (seenAtLast.get(key) ?? 0) + 1;
        seenAtLast.set(key, seen);
        if (seen <= (this.#printedAtLast.get(key) ?? 0)) continue;
      }
      fresh.push(line);
    }
    for (const line of fresh) {
      if (line.at > this.#lastAt) {
        this.#lastAt = line.at;
        this.#printedAtLast = new Map();
      }
      const key = keyOf(line);
      this.#printedAtLast.set(key, (this.#printedAtLast.get(key) ?? 0) + 1);
    }
    return fresh;
  }
}

export function registerLogsCommand(program: Command): void {
  const out = cliOutput(program);
  withConnection(
    withOutputFlags(
      program
        .command('logs')
        .description("a harness's log lines: its launched workers', one worker's, or one job's (as the dashboard shows them)")
        .argument('<endpointId>', 'endpoint id')
        .option('--job <jobId>', 'only the lines naming this job (and those an in-process worker logged for it)')
        .option('--worker <workerId>', "only this worker's lines")
        .option('--tail <n>', 'the last n lines, 1 to 1000 (default 200)')
        .option('-f, --follow', 'keep reading: print new lines as they come, until interrupted')
        .option('--interval <ms>', `with --follow: milliseconds between reads, 200 to 60000 (default ${DEFAULT_FOLLOW_INTERVAL_MS})`),
      'pretty',
      'time, worker, stream, then a JSON log line read as its level, message and fields',
    ),
  ).action(async (endpointId: string, flags: LogsFlags) => {
    const mode = outputMode(flags, 'pretty');
    const tail = integerFlag('--tail', flags.tail) ?? 200;
    if (tail < 1 || tail > MAX_LINES) throw new Error(`--tail must be a whole number from 1 to ${MAX_LINES}, got ${flags.tail}`);
    const interval = integerFlag('--interval', flags.interval) ?? DEFAULT_FOLLOW_INTERVAL_MS;
    if (interval < 200 || interval > 60_000) throw new Error(`--interval must be a whole number of milliseconds from 200 to 60000, got ${flags.interval}`);
    const management = managementClientFromEnv({
      ...(flags.baseUrl !== undefined ? { baseUrl: flags.baseUrl } : {}),
      ...(flags.apiKey !== undefined ? { apiKey: flags.apiKey } : {}),
    });
    const reads = new HarnessReads(management.baseUrl, flags.apiKey ?? (process.env.SERVERLESS_WORKER_API_KEY || process.env.RUNPOD_API_KEY || undefined));
    const query = (max: number): URLSearchParams => {
      const search = new URLSearchParams({ endpoint: endpointId, max: String(max) });
      if (flags.job !== undefined) search.set('job', flags.job);
      if (flags.worker !== undefined) search.set('worker', flags.worker);
      return search;
    };
    const print = (lines: readonly LogLineReply[]): void => {
      if (lines.length === 0) return;
      out.text(`${lines.map((line) => (mode === 'json' ? JSON.stringify(line) : prettyLogLine(line))).join('\n')}\n`);
    };
    // Lines of the job no longer kept: said on stderr (the lines stay alone on stdout), once, and again when more go.
    let droppedSaid: string | undefined;
    const sayDropped = (reply: LogsReply): void => {
      if (reply.dropped === undefined || reply.dropped === droppedSaid) return;
      droppedSaid = reply.dropped;
      out.note(droppedNote(reply));
    };
    const first = await reads.logs(query(tail));
    if (!first.launcher && first.inProcess === false)
      out.note('serverless-worker: this harness has no log source (no launched workers, no in-process worker): no lines will come');
    sayDropped(first);
    const newLines = new NewLines();
    print(newLines.take(first.lines));
    if (!flags.follow) return;
    for (;;) {
      await sleep(interval);
      const reply = await reads.logs(query(MAX_LINES));
      sayDropped(reply);
      print(newLines.take(reply.lines));
    }
  });
}
