/**
 * The supervised worker's stderr under --serve-api (child-log-lines.ts): every line is
 * forwarded as it came, and only JSON lines that name a job are kept for the job page,
 * with pino's level name, the message and the line's own fields.
 */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { jobLineOf, relayChildLog } from '../../packages/platform/src/local/child-log-lines.js';
import { JobLogBuffer } from '../../packages/platform/src/harness/dashboard/job-log-tap.js';
import { jsonLineFormatter } from '../../src/log/index.js';

describe('child log lines', () => {
  it('reads a job line: level name, message, its own fields; the base fields left out', () => {
    const line = JSON.stringify({
      level: 40,
      time: '2026-11-25T10:00:00.000Z',
      pid: 7,
      hostname: 'h',
      name: 'serverless-worker',
      requestId: 'job-1',
      msg: 'slow',
      ms: 12,
    });
    expect(jobLineOf(line)).toEqual({ jobId: 'job-1', at: Date.parse('2026-11-25T10:00:00.000Z'), level: 'warn', line: 'slow {"ms":12}' });
  });

  it('leaves lines without a job, and text that is not JSON, to the terminal alone', () => {
    expect(jobLineOf(JSON.stringify({ level: 30, msg: 'worker ready' }))).toBeUndefined();
    expect(jobLineOf('serverless-worker: the worker failed to start')).toBeUndefined();
    expect(jobLineOf('{not json')).toBeUndefined();
  });

  it('forwards every line, the lines that came in together in one call, and keeps the job lines', async () => {
    const stream = new PassThrough();
    const buffer = new JobLogBuffer();
    const forwarded: (readonly string[])[] = [];
    relayChildLog(stream, buffer, (lines) => forwarded.push(lines));
    const jobLine = JSON.stringify({ level: 30, time: 5, requestId: 'job-2', msg: 'echoing' });
    stream.write(`plain text\n${jobLine}\n`);
    await new Promise((resolve) => setImmediate(resolve));
    // A start-up error written at once: its three lines in one call (one write), whatever this process logs meanwhile.
    stream.end('serverless-worker: SW_INIT_FAILED: init failed\n  fix: look\n  (run with --verbose)\n');
    await new Promise((resolve) => setImmediate(resolve));
    expect(forwarded).toEqual([
      ['plain text', jobLine],
      ['serverless-worker: SW_INIT_FAILED: init failed', '  fix: look', '  (run with --verbose)'],
    ]);
    expect(buffer.forJob('job-2')).toEqual([{ at: 5, level: 'info', line: 'echoing', seq: expect.any(Number) as number }]);
  });

  it("renders the child's JSON lines as this process's pretty logger would, on a terminal; none where it logs JSON", () => {
    expect(jsonLineFormatter({ format: 'json' })).toBeUndefined();
    const format = jsonLineFormatter({ format: 'pretty' });
    expect(format).toBeDefined();
    const shown = format?.(JSON.stringify({ level: 30, time: 0, pid: 9, name: 'serverless-worker', requestId: 'job-3', msg: 'echoing' })) ?? '';
    expect(shown).toContain('echoing');
    expect(shown).toContain('job-3');
    expect(shown).not.toContain('"msg"');
    expect(format?.('plain text')).toBe('plain text\n');
  });
});
