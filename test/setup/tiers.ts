/**
 * @module test/setup/tiers
 * The suite's four tiers, decided by file name so that a new file lands in its tier without
 * editing a list (CONTRIBUTING.md, "Testing"). vitest.config.ts makes one project of each;
 * `npm run test:<name>` runs one, `npm test` (and .ci/run) all four in one vitest run.
 * The rules, first match wins:
 *
 * 1. `*.unit.test.ts`: unit, in the test process only (test/setup/unit-tier.ts refuses a
 *    child process).
 * 2. `*.browser.test.ts`: browser, any file that drives Chromium.
 * 3. `*.system.test.ts`, and every test under test/docker/ or test/package/: system, what
 *    builds, packs or installs whole packages or Docker images.
 * 4. Any other `*.test.ts`: integration (child processes, PostgreSQL, HTTP servers).
 *
 * test/setup/tiers.unit.test.ts checks that every test file is in exactly one tier, and that
 * a file using the browser's or the system tier's helpers is named for that tier.
 */

export interface Tier {
  /** The vitest project's name: `npx vitest run --project <name>`, `npm run test:<name>`. */
  readonly name: 'unit' | 'integration' | 'browser' | 'system';
  /** Globs relative to the repository root, as vitest reads them. */
  readonly include: readonly string[];
  readonly exclude: readonly string[];
}

const UNIT = 'test/**/*.unit.test.ts';
const BROWSER = 'test/**/*.browser.test.ts';
const SYSTEM = ['test/**/*.system.test.ts', 'test/docker/**/*.test.ts', 'test/package/**/*.test.ts'] as const;
const NODE_MODULES = '**/node_modules/**';

export const TIERS: readonly Tier[] = [
  { name: 'unit', include: [UNIT], exclude: [NODE_MODULES] },
  { name: 'integration', include: ['test/**/*.test.ts'], exclude: [UNIT, BROWSER, ...SYSTEM, NODE_MODULES] },
  { name: 'browser', include: [BROWSER], exclude: [UNIT, NODE_MODULES] },
  { name: 'system', include: [...SYSTEM], exclude: [UNIT, BROWSER, NODE_MODULES] },
];

/** The tier of a tier's own name (a typo in a caller is a type error). */
export function tier(name: Tier['name']): Tier {
  const found = TIERS.find((candidate) => candidate.name === name);
  if (found === undefined) throw new Error(`no tier ${name}`);
  return found;
}
