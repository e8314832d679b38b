/**
 * @module test/setup/shared-worker
 * Setup file of the tiers whose files share their worker process and its module cache
 * (`isolate: false`: every tier, test/setup/tiers.ts). vitest runs it
 * before each file: it captures the process's state (environment variables, working
 * directory, file mode mask, exit code: test/setup/process-state.ts) before the file is
 * imported and puts it back after the file's last hook, so that no file sees what an earlier
 * one left. The integration tier, shared, once failed 19 tests in 14 files this way: two CLI
 * files left SERVERLESS_WORKER_API_KEY set (overlapping in-process runs, since fixed in
 * test/cli/cli-run.ts), and every harness a later file started as a child took that key and
 * answered 401. Module-level state of our own code is not reset: a test must pass with the
 * modules another file has already used.
 */
import { afterAll } from 'vitest';
import { captureProcessState, restoreProcessState } from './process-state.js';

const before = captureProcessState();

afterAll(() => {
  restoreProcessState(before);
});
