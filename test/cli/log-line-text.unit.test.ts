/**
 * How `logs` prints a line for a person (issue 48 item 16): a worker's pino JSON line as
 * its level, message and fields, an error's stack below it; any other line as written.
 */
import { describe, expect, it } from 'vitest';
import { prettyLogLine } from '../../packages/platform/src/cli/commands/log-line-text.js';

const AT = Date.parse('2026-01-01T10:00:00.123Z');
const line = (text: string, stream = 'stdout') => ({ at: AT, workerId: 'worker-1', stream, line: text });

describe('prettyLogLine', () => {
  it("reads a pino line as its level, message and fields, leaving out pino's own", () => {
    const pino = JSON.stringify({ level: 30, time: AT, pid: 7, hostname: 'box', msg: 'loaded the model', jobId: 'job-1', ms: 812, note: 'two words' });
    expect(prettyLogLine(line(pino))).toBe('2026-01-01T10:00:00.123Z worker-1 stdout INFO loaded the model jobId=job-1 ms=812 note="two words"');
  });

  it("puts an error's stack on the lines below, indented", () => {
    const pino = JSON.stringify({ level: 50, msg: 'job failed', err: { type: 'Error', message: 'boom', stack: 'Error: boom\n    at run (worker.js:1:1)' } });
    expect(prettyLogLine(line(pino, 'stderr')).split('\n')).toEqual([
      '2026-01-01T10:00:00.123Z worker-1 stderr ERROR job failed err={"type":"Error","message":"boom"}',
      '    Error: boom',
      '        at run (worker.js:1:1)',
    ]);
  });

  it('prints any other line as written: plain text, JSON that is no log record, broken JSON', () => {
    for (const text of ['plain text', '{"not":"a log record"}', '{"level":30,']) {
      expect(prettyLogLine(line(text))).toBe(`2026-01-01T10:00:00.123Z worker-1 stdout ${text}`);
    }
  });
});
