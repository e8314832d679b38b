/**
 * @module test/setup/eager-setup
 * `SW_TEST_EAGER_SETUP=1` (set by `npm test`, test/setup/run-all.ts): the run's global
 * setups make what the system tier's files will ask for (both packages built and packed,
 * the Docker engine and its Node stand-in) from the start, beside the first tests. Without
 * it (one file, one tier) they are made on the first ask, so a run that needs none pays
 * nothing.
 */
export const EAGER_SETUP_ENV = 'SW_TEST_EAGER_SETUP';
