/**
 * @module test/setup/eager-setup
 * `SW_TEST_EAGER_SETUP=1` (set by `npm test`, test/setup/run-all.ts): the run's global
 * setups make what the system tier's files will ask for (both packages built and packed,
 * then the Docker engine and its Node stand-in) from the start, beside the first tests,
 * instead of on the first ask (the asking file's worker idle meanwhile: 32 s for the pack
 * and 93 s for the engine and stand-in in a CI run of 816 s). Without it (one file, one
 * tier) they are made on the first ask, so a run that needs none pays nothing.
 *
 * The steps run one after another, not at once, so that they add one busy process to the
 * first tests' load, not several. A test that asks before its step has started gets it at
 * once from its broker, as without this (the brokers make each thing once).
 */
export const EAGER_SETUP_ENV = 'SW_TEST_EAGER_SETUP';

let queue: Promise<unknown> = Promise.resolve();
const runStarted = Date.now();

const seconds = (ms: number): string => (ms / 1000).toFixed(0);

/**
 * Queue `step` (named `name` in the log) after the earlier ones when this run is eager; a
 * failure is left for the asking test to report. Each step's time is printed (stderr), so
 * that a run's log shows when the system tier's files could start.
 */
export function makeEagerly(name: string, step: () => Promise<unknown>): void {
  if (process.env[EAGER_SETUP_ENV] !== '1') return;
  queue = queue
    .then(async () => {
      const started = Date.now();
      const outcome = await step().then(
        () => 'made',
        () => 'failed (the asking test reports why)',
      );
      process.stderr.write(`[setup] ${name}: ${outcome} in ${seconds(Date.now() - started)} s, ${seconds(Date.now() - runStarted)} s into the run\n`);
    })
    .catch(() => undefined);
}
