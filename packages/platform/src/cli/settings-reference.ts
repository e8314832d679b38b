/**
 * @module cli/settings-reference
 * The reference pages' settings tables, each made from its one declaration: the `harness`
 * command's flags, a worker's flags (its own and `--serve-api`'s), the
 * SERVERLESS_WORKER_* environment variables and the library's options (`serve`, its
 * `platformTransport`, `serveLoadBalancing`: their schemas' `.meta()`). `npm run docs:settings` writes them
 * between their markers (scripts/reference-pages.ts); test/settings/settings-docs.unit.test.ts fails when a page
 * holds anything else.
 */
import {
  code,
  envTable,
  LoadBalancingOptionsSchema,
  optionsTable,
  PlatformTransportSettingsSchema,
  ServeOptionsSchema,
  settingsTable,
  WORKER_ENV,
  WORKER_FLAG_SETTINGS,
  type WorkerFlag,
  workerFlagText,
} from 'serverless-worker/internal';
import { HARNESS_SETTINGS } from './commands/harness-settings.js';

/** A worker's flags with their SDK spellings beside them: `--serve-api` (`--rp_serve_api`). */
function workerFlagsTable(): string {
  return settingsTable<WorkerFlag>(WORKER_FLAG_SETTINGS, (flag) => [workerFlagText(flag), ...(flag.aliases ?? [])].map(code).join(', '));
}

/** Marker name -> the table that belongs between its markers. */
export function settingsReferenceTables(): Record<string, string> {
  return {
    harness: settingsTable(HARNESS_SETTINGS),
    'worker-flags': workerFlagsTable(),
    'worker-env': envTable(WORKER_ENV),
    'serve-options': optionsTable(ServeOptionsSchema.shape),
    'serve-platform-transport': optionsTable(PlatformTransportSettingsSchema.shape, 'platformTransport.'),
    'lb-options': optionsTable(LoadBalancingOptionsSchema.shape),
  };
}
