/**
 * @module harness/dashboard/test-input-file
 * The submit form's example for `serverless-worker harness`: the `test_input.json` of
 * the working directory, when there is one (a worker's folder, where the harness is
 * often started), read once at start. A file that is not a job request is left out
 * with a warning naming what is wrong; the form then starts from `{ "input": {} }`
 * or the endpoint's input schema.
 */
import { resolve } from 'node:path';
import type { Logger } from 'pino';
import { type JobRequest, resolveTestInput, TEST_INPUT_FILE } from 'serverless-worker/internal';
const { existsSync } = process.getBuiltinModule('node:fs');

/** `{ testInput }` from `<cwd>/test_input.json`, or `{}` when it is absent or invalid (then `logger` warns). */
export function testInputFromWorkingDirectory(logger: Pick<Logger, 'warn'>, cwd: string = process.cwd()): { testInput?: JobRequest } {
  if (!existsSync(resolve(cwd, TEST_INPUT_FILE))) return {};
  try {
    return { testInput: resolveTestInput({ cwd }).request };
  } catch (error) {
    logger.warn({ err: error }, `dashboard: ${TEST_INPUT_FILE} in ${cwd} is left out of the submit form: ${(error as Error).message}`);
    return {};
  }
}
