/**
 * The in-process worker's job lines for the job page (job-log-tap.ts): a child logger
 * bound to a job keeps its lines (message and fields) under the job id, as the line also
 * goes to the logger's own destination; lines below the level, and lines of loggers not
 * bound to a job, are not kept; the buffer keeps the last lines of the last jobs.
 */
import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { JOB_LOG_LIMITS, JobLogBuffer, tapJobLogs } from '../../packages/platform/src/harness/dashboard/job-log-tap.js';

function sink(): { stream: Writable; lines: string[] } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  return { stream, lines };
}

describe('tapJobLogs', () => {
  it("keeps a job child's lines under its id and still writes them where the logger writes", () => {
    const out = sink();
    const buffer = new JobLogBuffer();
    const logger = tapJobLogs(pino({ level: 'info' }, out.stream), buffer, () => 42);
    const job = logger.child({ requestId: 'job-1' });
    job.info({ step: 1 }, 'loading');
    job.debug('below the level');
    job.child({ phase: 'inner' }).warn('from a grandchild');
    logger.info('not about a job');
    const kept = buffer.forJob('job-1');
    expect(kept).toEqual([
      { at: 42, level: 'info', line: 'loading {"step":1}', seq: expect.any(Number) as number },
      { at: 42, level: 'warn', line: 'from a grandchild', seq: expect.any(Number) as number },
    ]);
    // Numbered in the order logged (harness/launcher/log-order.ts): lines of one millisecond keep it.
    expect((kept[1]?.seq ?? 0) > (kept[0]?.seq ?? 0)).toBe(true);
    expect(out.lines.map((line) => (JSON.parse(line) as { msg: string; requestId?: string }).msg)).toEqual(['loading', 'from a grandchild', 'not about a job']);
    expect((JSON.parse(out.lines[0] ?? '{}') as { requestId: string }).requestId).toBe('job-1');
  });

  it('keeps the last lines of the last jobs', () => {
    const buffer = new JobLogBuffer();
    for (let i = 0; i < JOB_LOG_LIMITS.linesPerJob + 5; i++) buffer.add('a', { at: i, level: 'info', line: `line ${i}` });
    expect(buffer.forJob('a')).toHaveLength(JOB_LOG_LIMITS.linesPerJob);
    expect(buffer.forJob('a')[0]?.line).toBe('line 5');
    for (let j = 0; j < JOB_LOG_LIMITS.jobs; j++) buffer.add(`job-${j}`, { at: 0, level: 'info', line: 'x' });
    expect(buffer.forJob('a')).toEqual([]);
    buffer.add('long', { at: 0, level: 'info', line: 'y'.repeat(JOB_LOG_LIMITS.lineChars + 10) });
    expect(buffer.forJob('long')[0]?.line).toHaveLength(JOB_LOG_LIMITS.lineChars + 1);
  });

  it('keeps at most its character budget in all: the oldest jobs go first', () => {
    const buffer = new JobLogBuffer({ totalChars: 100 });
    for (let j = 0; j < 5; j++) for (let i = 0; i < 3; i++) buffer.add(`job-${j}`, { at: 0, level: 'info', line: 'x'.repeat(10) });
    expect(buffer.chars).toBeLessThanOrEqual(100);
    expect(buffer.forJob('job-4')).toHaveLength(3);
    expect(buffer.forJob('job-0')).toEqual([]);
  });
});
