import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT, jsonLines, runTs, ECHO_FIXTURE } from '../child-process.js';

const ECHO = join(REPO_ROOT, 'examples/echo/worker.ts');
const STREAM = join(REPO_ROOT, 'examples/stream/worker.ts');
/** A worker with no test_input.json beside it: the dry run looks in the working directory. */
const NO_LOCAL_INPUT = join(REPO_ROOT, 'test/fixtures/workers/secrets.ts');

function lastRecord(stdout: string): Record<string, unknown> {
  const lines = jsonLines(stdout);
  return lines[lines.length - 1] as Record<string, unknown>;
}

describe('dry run (real child processes)', () => {
  it('runs examples/echo with its test_input.json (beside the script, here also the working directory)', async () => {
    const result = await runTs(ECHO, [], { cwd: join(REPO_ROOT, 'examples/echo') });
    expect(result.exitCode).toBe(0);
    const record = lastRecord(String(result.stdout));
    expect(record).toMatchObject({ status: 'COMPLETED', output: { echo: 'hello from the dry run' } });
    expect(typeof record.id).toBe('string');
    expect(typeof record.delayTime).toBe('number');
    expect(typeof record.executionTime).toBe('number');
    // Logs go to stderr, never stdout.
    expect(String(result.stderr)).toContain('dry run');
    expect(jsonLines(String(result.stdout))).toHaveLength(1);
  });

  it('runs examples/stream, printing each chunk as it arrives, then the record', async () => {
    const result = await runTs(STREAM, ['--test-input', '@examples/stream/test_input.json']);
    expect(result.exitCode).toBe(0);
    const lines = jsonLines(String(result.stdout)) as Array<Record<string, unknown>>;
    const chunks = lines.filter((line) => 'stream' in line).map((line) => line.stream as { output: string; metrics: Record<string, unknown> });
    const record = lines[lines.length - 1] as { status: string; output: string[] };
    expect(record.status).toBe('COMPLETED');
    const text = 'Streaming workers send their output token by token as they make it.';
    expect(chunks.map((c) => c.output).join('')).toBe(text);
    expect(chunks.map((c) => c.metrics.stream_index)).toEqual(chunks.map((_, i) => i));
    expect(chunks[0]?.metrics).toMatchObject({ output_tokens: 1 });
    expect(record.output.join('')).toBe(text);
  });

  it('accepts the Python SDK spelling --test_input and inline JSON', async () => {
    const result = await runTs(ECHO_FIXTURE, ['--test_input', '{"input":{"message":"py","shout":true}}']);
    expect(result.exitCode).toBe(0);
    expect(lastRecord(String(result.stdout))).toMatchObject({ status: 'COMPLETED', output: { echo: 'PY' } });
  });

  it('exits 1 with the FAILED record when the handler throws', async () => {
    const result = await runTs(join(REPO_ROOT, 'test/fixtures/workers/failing.ts'), ['--test-input', '{"input":{}}']);
    expect(result.exitCode).toBe(1);
    const record = lastRecord(String(result.stdout));
    expect(record.status).toBe('FAILED');
    expect(record.error).toMatchObject({ error_type: 'Error', error_message: 'this handler always fails' });
  });

  it('refuses input that fails the worker’s schema at start-up: one line, no job, no traceback', async () => {
    const result = await runTs(ECHO_FIXTURE, ['--test-input', '{"input":{"message":""}}']);
    expect(result.exitCode).toBe(1);
    const stderr = String(result.stderr).trim().split('\n');
    expect(stderr[0]).toContain('SW_INPUT_VALIDATION');
    expect(stderr[0]).toContain('message: Too small');
    expect(stderr.length).toBeLessThanOrEqual(3);
    expect(String(result.stdout)).toBe('');
  });

  it('names a missing test input and shows the expected shape', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'sw-dry-'));
    const result = await runTs(NO_LOCAL_INPUT, [], { cwd: empty });
    expect(result.exitCode).toBe(1);
    expect(String(result.stderr)).toContain('SW_INVALID_TEST_INPUT');
    expect(String(result.stderr)).toContain('test_input.json');
    expect(String(result.stderr)).toContain('{"input": {');
    expect(String(result.stdout)).toBe('');
  });

  it.each([
    ['not JSON', '{input:', 'not valid JSON'],
    ['no input', '{"inputs":{}}', 'input is required'],
    ['a policy out of range', '{"input":{},"policy":{"ttl":5}}', 'policy.ttl must be from 10000 to 604800000 ms'],
  ])('names a malformed test input: %s', async (_name, text, message) => {
    const dir = mkdtempSync(join(tmpdir(), 'sw-dry-'));
    writeFileSync(join(dir, 'test_input.json'), text);
    const result = await runTs(NO_LOCAL_INPUT, [], { cwd: dir });
    expect(result.exitCode).toBe(1);
    expect(String(result.stderr)).toContain(message);
    expect(String(result.stderr)).toContain('expected a JSON object like');
  });

  it('names an unreadable @file', async () => {
    const result = await runTs(ECHO_FIXTURE, ['--test-input', '@/nonexistent/test.json']);
    expect(result.exitCode).toBe(1);
    expect(String(result.stderr)).toContain('Cannot read test input /nonexistent/test.json (ENOENT)');
  });

  it('puts GPU figures from nvidia-smi (a fake one on PATH) in the job-finished log line', async () => {
    const result = await runTs(join(REPO_ROOT, 'test/fixtures/workers/slow.ts'), ['--test-input', '{"input":{"ms":3000}}'], {
      env: {
        PATH: `${join(REPO_ROOT, 'test/fixtures/bin')}:${process.env.PATH ?? ''}`,
        FAKE_NVIDIA_SMI_FIXTURE: 'nvidia-smi.2x-h100.documented-format.csv',
      },
    });
    expect(result.exitCode).toBe(0);
    const finished = jsonLines(String(result.stderr)).find((line) => (line as { msg?: string }).msg === 'job finished') as
      | { gpu?: Record<string, number> }
      | undefined;
    expect(finished?.gpu).toMatchObject({
      samples: expect.any(Number),
      peakUtilizationPercent: expect.any(Number),
      meanUtilizationPercent: expect.any(Number),
      peakMemoryUsedBytes: expect.any(Number),
    });
    expect(finished?.gpu?.samples).toBeGreaterThan(0);
  });

  it('never logs s3Config secrets or API keys', async () => {
    const input = {
      input: {},
      s3Config: { accessId: 'AKIA-SECRET-ID', accessSecret: 'very-secret-value', bucketName: 'b', endpointUrl: 'https://s3.test' },
    };
    const result = await runTs(join(REPO_ROOT, 'test/fixtures/workers/secrets.ts'), ['--test-input', JSON.stringify(input)]);
    expect(result.exitCode).toBe(0);
    const stderr = String(result.stderr);
    expect(stderr).toContain('the whole job');
    expect(stderr).toContain('bucketName');
    expect(stderr).not.toContain('AKIA-SECRET-ID');
    expect(stderr).not.toContain('very-secret-value');
    expect(stderr).not.toContain('key-123');
  });
});

describe('graceful shutdown (SIGTERM to a child process)', () => {
  const SLOW = join(REPO_ROOT, 'test/fixtures/workers/slow.ts');

  async function signalWhenStarted(ms: number, env: Record<string, string> = {}) {
    const child = runTs(SLOW, ['--test-input', JSON.stringify({ input: { ms } })], { env });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('handler never started')), 30_000);
      child.stderr?.on('data', (data: Buffer) => {
        if (data.toString().includes('HANDLER_STARTED')) {
          clearTimeout(timer);
          resolve();
        }
      });
    });
    child.kill('SIGTERM');
    return child;
  }

  it('drains: the running job finishes and the worker exits 0', async () => {
    const result = await signalWhenStarted(1_500);
    expect(result.exitCode).toBe(0);
    expect(lastRecord(String(result.stdout))).toMatchObject({ status: 'COMPLETED', output: { sleptMs: 1_500 } });
    expect(String(result.stderr)).toContain('shutdown signal received');
  });

  it('aborts a job that outlives the drain deadline and reports it', async () => {
    const result = await signalWhenStarted(20_000, { SHUTDOWN_TIMEOUT_MS: '200' });
    expect(result.exitCode).toBe(1);
    const record = lastRecord(String(result.stdout));
    expect(record).toMatchObject({ status: 'FAILED', error: { error_code: 'SW_WORKER_SHUTDOWN' } });
  });
});
