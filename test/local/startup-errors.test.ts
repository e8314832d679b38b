import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ECHO_FIXTURE as ECHO, REPO_ROOT, jsonLines, runTs } from '../child-process.js';
import { closestName, editDistance } from '../../src/worker/closest-name.js';

/** The echo example itself, through tsx, where its test_input.json is the point (ECHO: its compiled bundle, child-process.ts). */
const ECHO_EXAMPLE = join(REPO_ROOT, 'examples/echo/worker.ts');
const SECRETS = join(REPO_ROOT, 'test/fixtures/workers/secrets.ts');
const INIT_WORKER = join(REPO_ROOT, 'test/fixtures/workers/init-worker.ts');

function stderrLines(stderr: unknown): string[] {
  return String(stderr)
    .trimEnd()
    .split('\n')
    .filter((line) => line !== '');
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

/** Each test starts one or two child processes: seconds each on a loaded machine. */
const CHILD_BOUND = { timeout: 120_000 };

describe('start-up errors: one clean line each (real child processes)', CHILD_BOUND, () => {
  it('a malformed platform environment: SW_INVALID_ENV naming the variable', async () => {
    const result = await runTs(ECHO, [], { env: { RUNPOD_WEBHOOK_GET_JOB: 'not-a-url' } });
    expectCleanFailure(result, 'SW_INVALID_ENV', 'RUNPOD_WEBHOOK_GET_JOB');
  });

  it.each([
    ['SERVERLESS_WORKER_METRICS_PORT', 'abc', 'must be a port number from 0 to 65535 (got "abc")'],
    ['SERVERLESS_WORKER_EXPECT_GPU', 'true', 'must be one of auto, nvidia, amd, any, none (got "true")'],
    ['SW_LOG_LEVEL', 'bogus', 'must be one of fatal, error, warn, info, debug, trace, silent (got "bogus")'],
  ])('a runtime variable the platform refuses stops the dry run too: %s=%s', async (name, value, expected) => {
    const result = await runTs(ECHO, ['--test-input', '{"input":{"message":"x"}}'], { env: { [name]: value } });
    expectCleanFailure(result, 'SW_INVALID_ENV', name, expected);
  });

  it('a runtime variable the platform refuses stops --serve-api before it listens', async () => {
    const result = await runTs(ECHO, ['--serve-api', '--port', '0'], { env: { SERVERLESS_WORKER_METRICS_PORT: '99999' } });
    expectCleanFailure(result, 'SW_INVALID_ENV', 'SERVERLESS_WORKER_METRICS_PORT', '(got "99999")');
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

  it('--serve-api on a non-loopback host without a key: SW_INSECURE_BIND, and no worker started to stop', async () => {
    const result = await runTs(ECHO, ['--serve-api', '--host', '0.0.0.0']);
    expectCleanFailure(result, 'SW_INSECURE_BIND', '0.0.0.0');
  });

  it('--serve-api on a port in use: SW_INVALID_OPTIONS naming the port, and no worker started to stop', async () => {
    const busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = busy.address() as AddressInfo;
      const result = await runTs(ECHO, ['--serve-api', '--port', String(port)]);
      expectCleanFailure(result, 'SW_INVALID_OPTIONS', `127.0.0.1:${port}`, 'EADDRINUSE');
    } finally {
      await new Promise((resolve) => busy.close(resolve));
    }
  });

  it.each([[[] as string[]], [['--serve-api', '--port', '0']]])(
    'a failed init (%j): its code and reason once, the fix, no stack; --verbose adds init’s own stack',
    async (mode) => {
      const result = await runTs(INIT_WORKER, [...mode, '--test-input', '{"input":{}}'], { env: { INIT_MODE: 'fail' } });
      expect(result.exitCode).toBe(1);
      const lines = stderrLines(result.stderr);
      // The three lines together, once (the run's log lines, written by an asynchronous
      // stream, may come before or after them).
      const first = lines.indexOf('serverless-worker: SW_INIT_FAILED: init failed: model file missing: /models/tiny.bin');
      expect(first, lines.join('\n')).toBeGreaterThanOrEqual(0);
      expect(lines.filter((line) => line.startsWith('serverless-worker: SW_INIT_FAILED'))).toHaveLength(1);
      expect(lines[first + 1]).toMatch(/^ {2}fix: /);
      expect(lines[first + 2]).toContain('--verbose');
      // No stack frame anywhere, and the reason not doubled by the log's cause handling.
      expect(String(result.stderr)).not.toMatch(/^\s+at /m);
      expect(String(result.stderr)).not.toContain('tiny.bin: model file missing');
      const verbose = await runTs(INIT_WORKER, [...mode, '--test-input', '{"input":{}}', '--verbose'], { env: { INIT_MODE: 'fail' } });
      expect(verbose.exitCode).toBe(1);
      expect(String(verbose.stderr)).toMatch(/caused by: Error: model file missing[^\n]*\n\s+at init \(.*init-worker\.ts:\d+/);
    },
  );

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
    const result = await runTs(ECHO_EXAMPLE, [], { cwd: REPO_ROOT });
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
