/**
 * The generated tables of the reference pages under docs/reference/: which table goes
 * into which page, and the tables themselves (the settings tables of
 * src/cli/settings-reference.ts, and the one error codes table made from the SDK's
 * `ERROR_CODES` and the platform's `PLATFORM_ERROR_CODES`).
 * `npm run docs:settings` (scripts/settings-docs.ts) writes them between their
 * `<!-- settings:<name>:start/end -->` markers; the docs tests check the pages hold them.
 */
import { settingsReferenceTables } from '../packages/platform/src/cli/settings-reference.js';
import { PLATFORM_ERROR_CODES } from '../packages/platform/src/job/platform-error-codes.js';
import { ERROR_CODES, type ErrorCodeEntry } from '../src/job/index.js';
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

/** Every error code of both packages: the SDK's table, then the platform's, each in its order. */
export function allErrorCodes(): [string, ErrorCodeEntry, 'SDK' | 'platform'][] {
  return [
    ...Object.entries(ERROR_CODES).map(([name, entry]) => [name, entry, 'SDK'] as [string, ErrorCodeEntry, 'SDK']),
    ...Object.entries(PLATFORM_ERROR_CODES).map(([name, entry]) => [name, entry, 'platform'] as [string, ErrorCodeEntry, 'platform']),
  ];
}

/** `| code | HTTP | meaning | how to fix | raised by |`, one row per code of both packages (allErrorCodes). */
export function errorCodesTable(): string {
  const rows = allErrorCodes().map(([name, entry, by]) => `| ${code(name)} | ${entry.status} | ${cell(entry.meaning)} | ${cell(entry.fix)} | ${by} |`);
  return ['| code | HTTP | meaning | how to fix | raised by |', '|---|---|---|---|---|', ...rows].join('\n');
}

/** Table name -> the table that belongs between its markers. */
export function referenceTables(): Record<string, string> {
  return { ...settingsReferenceTables(), 'error-codes': errorCodesTable() };
}
