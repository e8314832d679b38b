/**
 * @module test/setup/unit-tier
 * Setup file of the `unit` tier (files named `*.unit.test.ts`, see vitest.config.ts): it
 * makes the tier's rule hold instead of hoping it does. A unit test runs in its own
 * process only: no child process (so no browser, no esbuild service, no worker process,
 * no Docker, no embedded PostgreSQL), HTTP on loopback only. Any `node:child_process`
 * call throws, and the test fails afterwards too (code under test may catch the throw),
 * naming the rule and the fix (rename the file `*.test.ts`, the integration tier). The functions
 * are replaced on the module object and the ESM named exports are synced from it, so both
 * `import { spawn }` and `import cp from` see the guard; they are put back after the file.
 */
import childProcess from 'node:child_process';
import { syncBuiltinESMExports } from 'node:module';
import { afterAll, afterEach, expect } from 'vitest';
import { tierOfFile } from './tiers.js';

const STARTERS = ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork'] as const;

/** Calls refused during the current test, reported by the afterEach below (exported for its own test). */
export const refused: string[] = [];

const writable = childProcess as unknown as Record<(typeof STARTERS)[number], (...args: unknown[]) => unknown>;

// Only for a unit file: `npm test`'s one project (tiers.ts, ONE_PROJECT_ENV) runs this before
// every file of every tier, in workers that go on to other tiers' files.
const testPath = expect.getState().testPath;
if (testPath === undefined || tierOfFile(testPath) === 'unit') {
  const originals = STARTERS.map((name) => [name, writable[name]] as const);
  for (const name of STARTERS) {
    writable[name] = (...args: unknown[]) => {
      const message =
        `child_process.${name}(${JSON.stringify(args[0])}) in a unit test: files named *.unit.test.ts start no child process ` +
        '(nor a browser, PostgreSQL or Docker). Rename the file to *.test.ts to put it in the integration tier (npm run test:integration).';
      refused.push(message);
      throw new Error(message);
    };
  }
  syncBuiltinESMExports();

  afterEach(() => {
    const messages = refused.splice(0);
    if (messages.length > 0) throw new Error(messages.join('\n'));
  });

  // The next file of this worker may be of another tier: child_process as it was.
  afterAll(() => {
    for (const [name, original] of originals) writable[name] = original;
    syncBuiltinESMExports();
  });
}
