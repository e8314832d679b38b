/**
 * @module cli/commands/jobs
 * `serverless-worker jobs <endpointId>`: an endpoint's jobs from a harness, filtered as
 * the dashboard filters them (GET /ui/api/endpoints/{id}/jobs): by state, error code,
 * text, id, worker, kind, submission time; newest first unless `--order`. A table on
 * stdout (id, status, kind, submitted, execution, worker, error), the total on stderr;
 * `--json`: the page as JSON ({ endpointId, total, offset, limit, jobs }).
 */
import type { Command } from 'commander';
import { managementClientFromEnv } from '../../harness/management/management-client.js';
import { HarnessReads, type JobRowReply } from './harness-reads.js';
import { cliOutput, withConnection, type ConnectionFlags } from './management-output.js';

interface JobsFlags extends ConnectionFlags {
  state?: string;
  error?: string;
  text?: string;
  id?: string;
  worker?: string;
  kind?: string;
  from?: string;
  to?: string;
  order?: string;
  limit?: string;
  offset?: string;
  json?: boolean;
}

/** The flags as the route's query (the harness checks them and names a bad one). */
const QUERY_FLAGS = [
  ['state', 'state'],
  ['error', 'error'],
  ['text', 'text'],
  ['id', 'q'],
  ['worker', 'worker'],
  ['kind', 'kind'],
  ['from', 'from'],
  ['to', 'to'],
  ['order', 'order'],
  ['limit', 'limit'],
  ['offset', 'offset'],
] as const;

const ms = (value: number | null | undefined): string =>
  value === null || value === undefined ? '' : value < 1000 ? `${Math.round(value)} ms` : `${(value / 1000).toFixed(1)} s`;

function row(job: JobRowReply): string[] {
  const error = job.errorType !== undefined ? `${job.errorCode ?? job.errorType}: ${(job.errorMessage ?? '').replace(/\s+/g, ' ').slice(0, 80)}` : '';
  return [job.id, job.status, job.kind ?? '', job.submittedAt ?? '', ms(job.executionTime), job.workerId ?? '', error];
}

export function registerJobsCommand(program: Command): void {
  const out = cliOutput(program);
  withConnection(
    program
      .command('jobs')
      .description("an endpoint's jobs on a harness, filtered as the dashboard does")
      .argument('<endpointId>', 'endpoint id')
      .option('--state <states>', 'comma-separated states: IN_QUEUE, IN_PROGRESS, COMPLETED, FAILED, CANCELLED, TIMED_OUT')
      .option('--error <code>', 'error code, or its beginning (SW_HANDLER matches SW_HANDLER_ERROR)')
      .option('--text <text>', 'text in the input, output or error message')
      .option('--id <text>', 'part of the job id')
      .option('--worker <workerId>', 'the worker that ran the job')
      .option('--kind <kind>', 'run or runsync')
      .option('--from <time>', 'submitted at or after (ISO 8601, or epoch ms)')
      .option('--to <time>', 'submitted at or before (ISO 8601, or epoch ms)')
      .option('--order <order>', 'newest (default), oldest, slowest, waited')
      .option('--limit <n>', 'jobs to show, 1 to 500 (default 50)')
      .option('--offset <n>', 'jobs to skip (default 0)')
      .option('--json', 'the page as JSON'),
  ).action(async (endpointId: string, flags: JobsFlags) => {
    const management = managementClientFromEnv({
      ...(flags.baseUrl !== undefined ? { baseUrl: flags.baseUrl } : {}),
      ...(flags.apiKey !== undefined ? { apiKey: flags.apiKey } : {}),
    });
    const reads = new HarnessReads(management.baseUrl, flags.apiKey ?? (process.env.SERVERLESS_WORKER_API_KEY || process.env.RUNPOD_API_KEY || undefined));
    const query = new URLSearchParams();
    for (const [flag, name] of QUERY_FLAGS) {
      const value = flags[flag];
      if (value !== undefined) query.set(name, value);
    }
    const page = await reads.jobs(endpointId, query);
    if (flags.json) {
      out.record(page);
      return;
    }
    out.table(['ID', 'STATUS', 'KIND', 'SUBMITTED', 'EXECUTION', 'WORKER', 'ERROR'], page.jobs.map(row));
    const shownTo = page.offset + page.jobs.length;
    out.note(
      `${page.total} job${page.total === 1 ? '' : 's'} match${page.total === 1 ? 'es' : ''}; shown ${page.jobs.length === 0 ? 'none' : `${page.offset + 1}-${shownTo}`}${shownTo < page.total ? ` (--offset ${shownTo} for the next)` : ''}`,
    );
  });
}
