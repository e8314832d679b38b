/**
 * @module test/setup/fixtures-global-setup
 * Vitest global setup: under `npm test` (SW_TEST_EAGER_SETUP=1, test/setup/eager-setup.ts)
 * every compiled fixture that is missing or stale is built before the first file starts, in
 * one esbuild build (test/compiled-fixtures.ts, `prebuildFixtures`): each module of src/ and
 * of the packages a child loads at start is parsed once, where a fixture built on its first
 * ask parsed them all again (29 such builds, about 28 s of CPU a clean run, against about
 * 3.5 s for the one build). Awaited, so that no file builds a fixture beside it. Without
 * `npm test` (one file, one tier) fixtures are built on their first ask, as before. A failed
 * build is said on stderr and changes nothing else: each fixture is then built on its first
 * ask, and a fixture that cannot be built says why there. In every run it then names the
 * compiled watchdog thread in SW_DEV_WATCHDOG_THREAD (see useCompiledWatchdogThread).
 */
import { DEV_WATCHDOG_THREAD_ENV } from '../../src/transports/watchdog/thread-file.js';
import { compiledWatchdogThread, prebuildFixtures } from '../compiled-fixtures.js';
import { EAGER_SETUP_ENV } from './eager-setup.js';

export default async function setup(): Promise<void> {
  if (process.env[EAGER_SETUP_ENV] === '1') await prebuildAll();
  useCompiledWatchdogThread();
}

/**
 * SW_DEV_WATCHDOG_THREAD for the whole run (set here, before vitest starts its workers: they
 * and their children inherit it): the SDK run from src/, in a test process or a tsx child,
 * starts the compiled watchdog thread instead of tsx in the thread. It was about 0.4 s of CPU
 * per start, and the in-process tests start one per platform transport (the transport
 * contract suite alone 23 times). Code that runs compiled finds its own thread beside it and
 * never reads this. Unless already set (`SW_DEV_WATCHDOG_THREAD= npx vitest ...` runs with tsx
 * in the thread, as before).
 */
function useCompiledWatchdogThread(): void {
  if (process.env[DEV_WATCHDOG_THREAD_ENV] !== undefined) return;
  const thread = compiledWatchdogThread();
  if (thread !== undefined) process.env[DEV_WATCHDOG_THREAD_ENV] = thread;
}

async function prebuildAll(): Promise<void> {
  const started = Date.now();
  try {
    const built = await prebuildFixtures();
    process.stderr.write(`[setup] fixtures: ${built} built in one build in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  } catch (error) {
    process.stderr.write(
      `[setup] fixtures: the one build failed, each is built on its first ask instead: ${error instanceof Error ? error.message : String(error)}\n`,
    );
  }
}
