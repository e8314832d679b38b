/**
 * @module test/setup/tiers
 * The suite's four tiers, decided by file name so that a new file lands in its tier without
 * editing a list (CONTRIBUTING.md, "Testing"). vitest.config.ts makes one project of each;
 * `npm run test:<name>` runs one, `npm test` (and .ci/run) all four in one vitest run, as one
 * project (ONE_PROJECT_ENV below).
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
 *
 * Every tier shares: each worker process runs file after file of its tier with one module
 * cache (vitest's `isolate: false`), so fastify, the SDK, the harness and playwright are
 * imported once per worker, not once per file (unit 110 s -> 21 s; integration, 132 files:
 * 13-23 s of imports instead of 104-169 s, the tier 411-623 s instead of 480-653 s; browser,
 * 14 files: 57-62 s of CPU instead of 103-107, 72-90 s instead of 116-122 on the quiet
 * machine; system: 271 s of CPU against 312 in one pair; CONTRIBUTING.md).
 * test/setup/shared-worker.ts puts back the process's environment, working directory, mask
 * and exit code after each file. A file that needs a fresh module graph (vi.mock, module
 * state by design) would need an isolated tier (`isolate: true`); none does (CONTRIBUTING.md:
 * no mocks of our own modules).
 */

import { matchesGlob, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface Tier {
  /** The vitest project's name: `npx vitest run --project <name>`, `npm run test:<name>`. */
  readonly name: 'unit' | 'integration' | 'browser' | 'system';
  /** Globs relative to the repository root, as vitest reads them. */
  readonly include: readonly string[];
  readonly exclude: readonly string[];
  /** false: the files of one worker share its process and module cache (vitest's `isolate`), with test/setup/shared-worker.ts. */
  readonly isolate: boolean;
}

const UNIT = 'test/**/*.unit.test.ts';
const BROWSER = 'test/**/*.browser.test.ts';
const SYSTEM = ['test/**/*.system.test.ts', 'test/docker/**/*.test.ts', 'test/package/**/*.test.ts'] as const;
const NODE_MODULES = '**/node_modules/**';

export const TIERS: readonly Tier[] = [
  { name: 'unit', include: [UNIT], exclude: [NODE_MODULES], isolate: false },
  { name: 'integration', include: ['test/**/*.test.ts'], exclude: [UNIT, BROWSER, ...SYSTEM, NODE_MODULES], isolate: false },
  { name: 'browser', include: [BROWSER], exclude: [UNIT, NODE_MODULES], isolate: false },
  { name: 'system', include: [...SYSTEM], exclude: [UNIT, BROWSER, NODE_MODULES], isolate: false },
];

/** The tier of a tier's own name (a typo in a caller is a type error). */
export function tier(name: Tier['name']): Tier {
  const found = TIERS.find((candidate) => candidate.name === name);
  if (found === undefined) throw new Error(`no tier ${name}`);
  return found;
}

/** The setup files of a tier's vitest project: the unit tier's guard, the other tiers' CPU count, and the shared tiers' state restore. */
export function setupFilesOf(tier: Tier): string[] {
  return [...(tier.name === 'unit' ? ['test/setup/unit-tier.ts'] : ['test/setup/file-cpu.ts']), ...(tier.isolate ? [] : ['test/setup/shared-worker.ts'])];
}

const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The tier of a test file (absolute, or relative to the repository root), by the rules above; undefined for a file in none. */
export function tierOfFile(file: string): Tier['name'] | undefined {
  const path = relative(REPO_ROOT, file.startsWith('/') ? file : `${REPO_ROOT}/${file}`)
    .split(sep)
    .join('/');
  const matches = (globs: readonly string[]) => globs.some((glob) => matchesGlob(path, glob));
  return TIERS.find((candidate) => matches(candidate.include) && !matches(candidate.exclude))?.name;
}

/**
 * `npm test` runs the four tiers as ONE vitest project (test/setup/run-all.ts sets this to 1):
 * vitest gives each project its own worker processes and starts a fresh one whenever a
 * worker's next file is of another project, so a run of four projects on three workers
 * started a dozen processes that each imported the harness, fastify and the rest again
 * (about 85 s of the run's import time). In the one project each worker lives the whole run;
 * each tier's setup files still apply to its files only (they read the file's tier:
 * unit-tier.ts guards the unit files, file-cpu.ts counts the others). `npm run test:<tier>`
 * and a plain `npx vitest run` keep the four projects.
 */
export const ONE_PROJECT_ENV = 'SW_TEST_ONE_PROJECT';

/** The name of that one project. */
export const ONE_PROJECT_NAME = 'all-tiers';

/** The setup files of the one project: every tier's, each acting on its tier's files only. */
export function setupFilesOfOneProject(): string[] {
  return ['test/setup/unit-tier.ts', 'test/setup/file-cpu.ts', 'test/setup/shared-worker.ts'];
}
