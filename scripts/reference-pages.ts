/**
 * The generated tables of the reference pages under docs/reference/: which table goes
 * into which page, and the tables themselves (the settings tables of
 * src/cli/settings-reference.ts, and the error codes table made from `ERROR_CODES`).
 * `npm run docs:settings` (scripts/settings-docs.ts) writes them between their
 * `<!-- settings:<name>:start/end -->` markers; the docs tests check the pages hold them.
 */
import { settingsReferenceTables } from '../packages/platform/src/cli/settings-reference.js';
import { ERROR_CODES } from '../src/job/index.js';
import { cell, code } from '../src/settings/reference-table.js';

/** Table name -> the page (relative to the repository root) that holds it between its markers. */
export const REFERENCE_PAGES: Readonly<Record<string, string>> = {
  'serve-options': 'docs/reference/options.md',
  'serve-platform-transport': 'docs/reference/options.md',
  'lb-options': 'docs/reference/options.md',
  'worker-flags': 'docs/reference/flags-and-env.md',
  harness: 'docs/reference/flags-and-env.md',
  'worker-env': 'docs/reference/flags-and-env.md',
  'error-codes': 'docs/reference/error-codes.md',
};

/** `| code | HTTP | meaning | how to fix |`, one row per entry of `ERROR_CODES`, in its order. */
export function errorCodesTable(): string {
  const rows = Object.entries(ERROR_CODES).map(([name, entry]) => `| ${code(name)} | ${entry.status} | ${cell(entry.meaning)} | ${cell(entry.fix)} |`);
  return ['| code | HTTP | meaning | how to fix |', '|---|---|---|---|', ...rows].join('\n');
}

/** Table name -> the table that belongs between its markers. */
export function referenceTables(): Record<string, string> {
  return { ...settingsReferenceTables(), 'error-codes': errorCodesTable() };
}
