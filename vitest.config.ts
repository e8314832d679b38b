import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { ONE_PROJECT_ENV, ONE_PROJECT_NAME, TIERS, setupFilesOf, setupFilesOfOneProject } from './test/setup/tiers.js';
import LongestFirstSequencer from './test/setup/file-order.js';

/** Examples import the packages by name, as a worker author would (tsconfig.json's paths say the same for tsc and tsx). */
const PACKAGE_ALIASES = [
  // The platform package reaches the SDK through its one internal entry point (src/exports/internal.ts).
  { find: /^serverless-worker\/internal$/, replacement: fileURLToPath(new URL('./src/exports/internal.ts', import.meta.url)) },
  { find: /^serverless-worker-platform\/serve-api$/, replacement: fileURLToPath(new URL('./packages/platform/src/local/serve-api.ts', import.meta.url)) },
  { find: /^serverless-worker-platform\/cli$/, replacement: fileURLToPath(new URL('./packages/platform/src/cli/platform-commands.ts', import.meta.url)) },
  { find: /^serverless-worker-platform$/, replacement: fileURLToPath(new URL('./packages/platform/src/index.ts', import.meta.url)) },
  { find: /^serverless-worker\/testing$/, replacement: fileURLToPath(new URL('./src/testing/index.ts', import.meta.url)) },
  { find: /^serverless-worker\/harness$/, replacement: fileURLToPath(new URL('./src/exports/harness.ts', import.meta.url)) },
  { find: /^serverless-worker\/runtime$/, replacement: fileURLToPath(new URL('./src/exports/runtime.ts', import.meta.url)) },
  { find: /^serverless-worker$/, replacement: fileURLToPath(new URL('./src/index.ts', import.meta.url)) },
];

/** What every tier's files run with. */
const TIER_SETTINGS = {
  // The CI machine runs Node 20 on purpose (CONTRIBUTING.md): the workers' start-up warning about
  // it (src/worker/node-version.ts) would add a line to every child's stderr that tests read.
  // test/worker/node-version.test.ts turns it back on; helpers that give a child a clean environment set it too.
  env: { SW_NODE_VERSION_WARNING: 'off' },
  // Child processes and real sockets: give slow shared machines room.
  testTimeout: 30_000,
  hookTimeout: 30_000,
  pool: 'forks',
} as const;

/** A vitest project of each tier: `npm run test:<tier>`, `npx vitest run`. */
export const tierProjects = TIERS.map((tier) => ({
  resolve: { alias: PACKAGE_ALIASES },
  test: {
    name: tier.name,
    include: [...tier.include],
    exclude: [...tier.exclude],
    ...TIER_SETTINGS,
    isolate: tier.isolate,
    setupFiles: setupFilesOf(tier),
  },
}));

/** The four tiers as one project, for `npm test` (every file of every tier; each tier's setup files act on its own files). */
export const oneProject = {
  resolve: { alias: PACKAGE_ALIASES },
  test: {
    name: ONE_PROJECT_NAME,
    include: [...new Set(TIERS.flatMap((tier) => tier.include))],
    exclude: TIERS.map((tier): string[] => [...tier.exclude]).reduce((common, excludes) => common.filter((glob) => excludes.includes(glob))),
    ...TIER_SETTINGS,
    // The tiers all share their workers (tiers.ts); the one project does too.
    isolate: TIERS.some((tier) => tier.isolate),
    setupFiles: setupFilesOfOneProject(),
  },
};

export default defineConfig({
  resolve: { alias: PACKAGE_ALIASES },
  test: {
    // Four tiers, by file name (test/setup/tiers.ts says the rules; CONTRIBUTING.md, "Testing").
    // `unit`: in-process only (a setup file makes any child process fail them).
    // `integration`, `browser`, `system`: the rest. `npm test` and .ci/run run all four.
    // Every tier's files share their workers' module cache (isolate: false, tiers.ts):
    // importing fastify and the rest once per worker instead of once per file took the unit
    // tier from 110 s to 21 s (load ~20), the integration tier's imports from 104-169 s to
    // 13-23 s (its run from 480-653 s to 411-623 s), the browser tier's CPU from 103-107 s to
    // 57-62 s (CONTRIBUTING.md);
    // test/setup/shared-worker.ts puts back the process's environment, working directory,
    // mask and exit code after each file.
    // The projects do not extend this config: a project that extends it runs its global
    // setups again (vitest runs them once in the root project and once in each project
    // that has them), so one `npm test` built and packed both packages twice (the CLI
    // tests of the integration tier and the packed-package tests of the system tier each
    // asked their own broker) and could start two PostgreSQL servers. The projects read
    // the root's `provide`d broker URLs instead (vitest merges the root's context into each).
    // `npm test` runs them as one project instead (tiers.ts, ONE_PROJECT_ENV: one set of workers for the whole run).
    projects: process.env[ONE_PROJECT_ENV] === '1' ? [oneProject] : tierProjects,
    ...TIER_SETTINGS,
    // Two files at a time: most tests wait on child processes, sockets and timers, not
    // the CPU. On the 2-core CI machines the default (one worker) took 826 s, two took 519 s,
    // the same tests passing. Three: the last minutes of a run had the cores 71-80 % busy
    // (files waiting on children and timers); clean-clone .ci/run 822 s against 921 s with two
    // (2026-12-02, 1 897 passing both times, the cores 97 % against 89 % busy). Four
    // (2026-12-03, clean clone, quiet): vitest 653 s against 663 s, the cores 99-100 % busy from
    // start to end and the checks finishing with the last file: the run is CPU-bound; not kept.
    // Four again (16:23, before the one project of `npm test`): 594 s against 606 s, with a
    // race between two docker files (since one file); not kept.
    maxWorkers: 3,
    // Longest files first, from a recorded run (test/setup/file-order.ts): the two workers end together.
    sequence: { sequencer: LongestFirstSequencer },
    // One PostgreSQL server, one build and pack of the packages and one private Docker engine
    // per run, each started only when a test asks for it (in the root project only: see above),
    // or from the start under `npm test` (test/setup/eager-setup.ts: the pack, then the engine).
    // Under `npm test`, every compiled fixture in one build before the first file (test/setup/fixtures-global-setup.ts).
    globalSetup: ['test/setup/fixtures-global-setup.ts', 'test/postgres/global-setup.ts', 'test/package/global-setup.ts', 'test/docker/engine/global-setup.ts'],
  },
});
