/**
 * @module cli/commands/harness
 * `serverless-worker harness`: the local platform as a standalone server, with no
 * worker of its own. Workers (processes or containers) join over the worker API by
 * pointing their RUNPOD_WEBHOOK_* variables at it; callers use the queue API, the
 * OpenAI-compatible routes and the management API as they would the service.
 * Runs until SIGTERM or SIGINT, then drains: no new job is handed out, running jobs
 * get --drain-timeout-ms to finish (their results and waiting /runsync calls are
 * answered), and what is left is reported lost when the job store is in memory (the
 * default); with `--store postgres://…` it stays in the database for the next start.
 * The server is loaded when the command runs (run-harness.ts), so the CLI's other
 * commands start without it.
 */
import type { Command } from 'commander';
import { API_KEY_ENV, parseOrThrow } from 'serverless-worker/internal';
import { addSettingOptions } from '../setting-options.js';
import { HARNESS_SETTINGS, HarnessCommandOptionsSchema } from './harness-settings.js';

const HELP_AFTER = `
Routes (base URL printed at start):
  /v2/<endpoint>/run, runsync, status/<id>, status-sync/<id>, stream/<id>, cancel/<id>,
      retry/<id>, purge-queue, health, requests      the queue API
  /v2/<endpoint>/openai/v1/<route>                   OpenAI-compatible calls, as jobs
  /v2/<endpoint>/job-take/..., job-done/..., ping/...  the worker API, for workers
  /lb/<endpoint>/<path>                              a load-balancing endpoint: <path> of a healthy worker
  /v2/<endpoint>/load-balancing/workers              register (POST {url, healthUrl?}), list, DELETE /<id>
  /v1/templates, networkvolumes, endpoints, pods     the management API
  /metrics                                           Prometheus metrics
  /ui                                                the web dashboard (jobs, streams, workers, charts)

Auth: with an API key (--api-key or ${API_KEY_ENV}) every route needs
"Authorization: Bearer <key>" (the bare key is accepted too). Without one the harness
listens on loopback only; --host with another address then needs --insecure-no-auth.

Logs: JSON lines (or pretty on a terminal) on stderr; LOG_LEVEL sets the level.

Example:
  serverless-worker harness --port 8000 --endpoint my-endpoint
  # in another shell: the RUNPOD_* lines it printed, then
  tsx worker.ts`;

/** Register `harness` on the program. */
export function registerHarnessCommand(program: Command): void {
  const command = program
    .command('harness')
    .description('Run the local platform (queue API, OpenAI-compatible routes, worker API, management API, metrics) with no worker of its own');
  addSettingOptions(command, HARNESS_SETTINGS)
    .addHelpText('after', HELP_AFTER)
    .action(async (raw: unknown) => {
      const options = parseOrThrow(HarnessCommandOptionsSchema, raw, 'SW_INVALID_OPTIONS', 'harness options');
      const { runHarness } = await import('./run-harness.js');
      await runHarness(options);
    });
}
