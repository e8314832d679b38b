import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT, jsonLines, runTs } from '../child-process.js';
import { closestName, editDistance } from '../../src/worker/closest-name.js';

const ECHO = join(REPO_ROOT, 'examples/echo/worker.ts');
const SECRETS = join(REPO_ROOT, 'test/fixtures/workers/secrets.ts');

function stderrLines(stderr: unknown): string[] {
  return String(stderr).trimEnd().split('\n').filter((line) => line !== '');
}

/** A bad start: exit code != 0, at most three lines on stderr, the first naming the code and the problem. */
function expectCleanFailure(result: { exitCode?: number | undefined; stderr: unknown; stdout: unknown }, code: string, ...words: string[]): string[] {
  expect(result.exitCode).not.toBe(0);
  const lines = stderrLines(result.stderr);
  expect(lines.length, lines.join('\n')).toBeGreaterThanOrEqual(2);
  expect(lines.length, lines.join('\n')).toBeLessThanOrEqual(3);
  expect(lines[0]).toMatch(new RegExp(`^serverless-worker: ${code}: `));
  for (const word of words) expect(lines[0]).toContain(word);
  expect(lines[1]).toMatch(/^ {2}fix: /);
  // No log record, no stack frame.
  expect(String(result.stderr)).not.toContain('"level"');
  expect(String(result.stderr)).not.toMatch(/^\s+at /m);
  expect(String(result.stdout)).toBe('');
  return lines;
}

/** Each test starts one or two tsx child processes: seconds each on a loaded machine. */
const CHILD_BOUND = { timeout: 120_000 };

describe('start-up errors: one clean line each (real child processes)', CHILD_BOUND, () => {
  it('a malformed platform environment: SW_INVALID_ENV naming the variable', async () => {
    const result = await runTs(ECHO, [], { env: { RUNPOD_WEBHOOK_GET_JOB: 'not-a-url' } });
    expectCleanFailure(result, 'SW_INVALID_ENV', 'RUNPOD_WEBHOOK_GET_JOB');
  });

  it('an unknown serve() option: SW_INVALID_OPTIONS with the closest known name', async () => {
    const result = await runTs(join(REPO_ROOT, 'test/fixtures/workers/unknown-option.ts'), ['--test-input', '{"input":{}}']);
    expectCleanFailure(result, 'SW_INVALID_OPTIONS', 'returnAggregateStream', 'did you mean aggregateStream?');
  });

  it('a misspelt flag: SW_INVALID_OPTIONS with the closest known flag, not a dry run', async () => {
    const result = await runTs(ECHO, ['--tset-input', '{"input":{"message":"x"}}']);
    expectCleanFailure(result, 'SW_INVALID_OPTIONS', '--tset-input', 'did you mean --test-input?');
  });

  it('a stray argument is refused, and arguments after -- are left to the author', async () => {
    expectCleanFailure(await runTs(ECHO, ['test_input.json']), 'SW_INVALID_OPTIONS', '"test_input.json"', '--test-input @file.json');
    const ok = await runTs(ECHO, ['--test-input', '{"input":{"message":"x"}}', '--', '--my-own-flag']);
    expect(ok.exitCode).toBe(0);
  });

  it('test input that fails the worker’s inputSchema: SW_INPUT_VALIDATION before any job runs', async () => {
    const result = await runTs(ECHO, ['--test-input', '{"input":{"message":""}}']);
    expectCleanFailure(result, 'SW_INPUT_VALIDATION', 'message: Too small');
  });

  it.each([
    ['not JSON', '{input:', 'not valid JSON'],
    ['not a job request', '{"inputs":{}}', 'input is required'],
  ])('bad test input (%s): SW_INVALID_TEST_INPUT', async (_name, text, words) => {
    const result = await runTs(ECHO, ['--test-input', text]);
    expectCleanFailure(result, 'SW_INVALID_TEST_INPUT', words);
  });

  it('--verbose (or SW_LOG_LEVEL=debug) adds the stack', async () => {
    for (const [args, env] of [
      [['--verbose', '--tset-input', 'x'], {}],
      [['--tset-input', 'x'], { SW_LOG_LEVEL: 'debug' }],
    ] as const) {
      const result = await runTs(ECHO, [...args], { env });
      expect(result.exitCode).toBe(1);
      expect(String(result.stderr)).toContain('SW_INVALID_OPTIONS: Unknown flag --tset-input');
      expect(String(result.stderr)).toMatch(/^\s+at .*parseWorkerArgs/m);
    }
  });

  it('--help prints the flags and exits 0 without starting a dry run', async () => {
    const result = await runTs(ECHO, ['--help'], { cwd: mkdtempSync(join(tmpdir(), 'sw-help-')) });
    expect(result.exitCode).toBe(0);
    expect(String(result.stdout)).toContain('--test-input');
    expect(String(result.stdout)).toContain('--serve-api');
    expect(String(result.stderr)).not.toContain('dry run');
  });
});

describe('test_input.json: beside the worker script first, then the working directory', CHILD_BOUND, () => {
  it('finds the example’s test_input.json from the repository root and says which it used', async () => {
    const result = await runTs(ECHO, [], { cwd: REPO_ROOT });
    expect(result.exitCode).toBe(0);
    expect(String(result.stderr)).toContain(join(REPO_ROOT, 'examples/echo/test_input.json'));
    const records = jsonLines(String(result.stdout));
    expect(records[records.length - 1]).toMatchObject({ status: 'COMPLETED', output: { echo: 'hello from the dry run' } });
  });

  it('falls back to the working directory when none is beside the script', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sw-cwd-'));
    writeFileSync(join(dir, 'test_input.json'), '{"input":{"from":"cwd"}}');
    const result = await runTs(SECRETS, [], { cwd: dir });
    expect(result.exitCode).toBe(0);
    const used = jsonLines(String(result.stderr)).find((line) => (line as { from?: string }).from !== undefined) as { from: string };
    expect(used.from).toBe(join(dir, 'test_input.json'));
  });
});

describe('closest name', () => {
  it('measures edits, swaps of neighbours counting one', () => {
    expect(editDistance('tset', 'test')).toBe(1);
    expect(editDistance('kitten', 'sitting')).toBe(3);
    expect(editDistance('', 'abc')).toBe(3);
  });

  it('suggests a near name, across - and _ and case, and nothing for a far one', () => {
    const flags = ['test-input', 'serve-api', 'port', 'host'];
    expect(closestName('tset-input', flags)).toBe('test-input');
    expect(closestName('test_input', flags)).toBe('test-input');
    expect(closestName('serveapi', flags)).toBe('serve-api');
    expect(closestName('returnAggregateStream', ['aggregateStream', 'concurrency'])).toBe('aggregateStream');
    expect(closestName('completely-different', flags)).toBeUndefined();
  });
});
