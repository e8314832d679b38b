/**
 * @module job/test-input
 * The dry run's test input: `--test-input '<json>'`, `--test-input @file.json`, or
 * `test_input.json` beside the worker script, else in the working directory (so that
 * `node examples/echo/worker.js` works from the repository root too). Bad input names
 * the problem and shows the expected shape.
 */
import { resolve } from 'node:path';
import { ServerlessWorkerError, isServerlessWorkerError, parseJobRequest, type JobRequest } from './index.js';
const { readFileSync, existsSync } = process.getBuiltinModule('node:fs');

export const TEST_INPUT_FILE = 'test_input.json';
const EXPECTED_SHAPE = 'expected a JSON object like {"input": {"prompt": "hello"}} (optional: "policy", "webhook", "s3Config")';

export interface TestInputSource {
  /** The value of --test-input / --test_input, if given. */
  flag?: string;
  /** Directory to look for test_input.json in (after scriptDir), and to resolve @file against; default process.cwd(). */
  cwd?: string;
  /** The worker script's directory: test_input.json is looked for here first; default none. */
  scriptDir?: string;
}

/** Where the test input came from, for the log line. */
export interface ResolvedTestInput {
  readonly request: JobRequest;
  readonly from: string;
}

function invalid(message: string, cause?: unknown): ServerlessWorkerError {
  return new ServerlessWorkerError('SW_INVALID_TEST_INPUT', `${message}; ${EXPECTED_SHAPE}`, undefined, { cause });
}

function parseText(text: string, from: string): JobRequest {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw invalid(`Test input from ${from} is not valid JSON (${(error as Error).message})`, error);
  }
  try {
    return parseJobRequest(parsed);
  } catch (error) {
    if (isServerlessWorkerError(error)) throw invalid(`Test input from ${from} is not a job request: ${error.message}`, error);
    throw error;
  }
}

function readFile(path: string, from: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw invalid(`Cannot read test input ${from} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`, error);
  }
}

/** The job request for the dry run; throws SW_INVALID_TEST_INPUT. */
export function resolveTestInput(source: TestInputSource): ResolvedTestInput {
  const cwd = source.cwd ?? process.cwd();
  if (source.flag !== undefined) {
    const flag = source.flag.trim();
    if (flag === '') throw invalid('--test-input is empty');
    if (flag.startsWith('@')) {
      const path = resolve(cwd, flag.slice(1));
      return { request: parseText(readFile(path, path), path), from: path };
    }
    return { request: parseText(flag, '--test-input'), from: '--test-input' };
  }
  const places = [...new Set([...(source.scriptDir !== undefined ? [resolve(source.scriptDir, TEST_INPUT_FILE)] : []), resolve(cwd, TEST_INPUT_FILE)])];
  const path = places.find((place) => existsSync(place));
  if (path === undefined) {
    throw invalid(`No test input: pass --test-input '<json>' or --test-input @file.json, or create ${places.join(' or ')}`);
  }
  return { request: parseText(readFile(path, path), path), from: path };
}
