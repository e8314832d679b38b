/**
 * Each job's own log lines from launched workers (issue 32 item 9): kept under the job
 * by bytes and by time, with a total bound, and what was dropped is said, not silent.
 * The endpoint's 1 000-line ring used to be all there was: under load a job's lines were
 * gone within minutes and the page said "No line for this job (yet)".
 */
import { describe, expect, it } from 'vitest';
import { JOB_LINES_LIMITS, JobLines, jobIdOfLine } from '../../../packages/platform/src/harness/launcher/job-lines.js';
import { WorkerLogs, type WorkerLogLine } from '../../../packages/platform/src/harness/launcher/worker-logs.js';

let lastSeq = 0;
const line = (at: number, jobId: string, text = 'x'.repeat(100)): WorkerLogLine => ({
  at,
  seq: ++lastSeq,
  workerId: 'w1',
  stream: 'stdout',
  line: `{"level":30,"requestId":"${jobId}","msg":"${text}"}`,
});

describe('JobLines', () => {
  it('finds the job a JSON log line names', () => {
    expect(jobIdOfLine(line(0, 'job-1').line)).toBe('job-1');
    expect(jobIdOfLine('{"event":"started","jobId":"job-2"}')).toBe('job-2');
    expect(jobIdOfLine('plain text')).toBeUndefined();
  });

  it('finds the job id a plain line names (a harness job id in its text)', () => {
    const id = '0f8fad5b-d9cb-469f-a165-70867728950e';
    expect(jobIdOfLine(`warning: job ${id} is slow`)).toBe(id);
    expect(jobIdOfLine(`done sync-${id}`)).toBe(`sync-${id}`);
  });

  it("keeps a plain line naming a job after the endpoint's ring turned over, and counts what its bound drops", () => {
    const id = '0f8fad5b-d9cb-469f-a165-70867728950e';
    const ring = new WorkerLogs(1_000);
    const lines = new JobLines({ bytesPerJob: 1_024 });
    const add = (text: string, at: number) => {
      const entry = ring.add('ep', { at, workerId: 'w1', stream: 'stderr', line: text });
      const jobId = jobIdOfLine(text);
      if (jobId !== undefined) lines.add('ep', jobId, entry);
    };
    add(`job ${id}: a plain stderr line`, 0);
    for (let i = 0; i < 2_000; i++) add(`other line ${i}`, 1 + i);
    expect(ring.read('ep').some((entry) => entry.line.includes(id))).toBe(false);
    expect(lines.read('ep', id, 3_000)?.lines.map((entry) => entry.line)).toEqual([`job ${id}: a plain stderr line`]);
    for (let i = 0; i < 40; i++) add(`job ${id}: line ${i} ${'x'.repeat(40)}`, 3_000 + i);
    const read = lines.read('ep', id, 4_000);
    expect(read?.droppedLines?.count).toBe(41 - (read?.lines.length ?? 0));
    expect(read?.droppedLines?.count).toBeGreaterThan(0);
  });

  it("keeps a job's lines after 1 000 lines of other jobs pushed them out of the endpoint's ring", () => {
    const ring = new WorkerLogs(1_000);
    const lines = new JobLines();
    const add = (entry: WorkerLogLine, jobId: string) => {
      ring.add('ep', entry);
      lines.add('ep', jobId, entry);
    };
    for (let i = 0; i < 5; i++) add(line(i, 'early'), 'early');
    for (let i = 0; i < 1_000; i++) add(line(10 + i, `busy-${i % 50}`), `busy-${i % 50}`);
    expect(ring.read('ep').filter((entry) => entry.line.includes('"early"'))).toEqual([]);
    const read = lines.read('ep', 'early', 2_000);
    expect(read?.lines).toHaveLength(5);
    expect(read?.dropped).toBeUndefined();
  });

  it("drops a job's oldest lines past bytesPerJob and says how many", () => {
    const lines = new JobLines({ bytesPerJob: 1_000 });
    for (let i = 0; i < 30; i++) lines.add('ep', 'loud', line(i, 'loud'));
    const read = lines.read('ep', 'loud', 100);
    expect(read?.lines.length).toBeLessThan(30);
    expect(read?.lines.at(-1)?.at).toBe(29);
    expect(read?.dropped).toContain(`${30 - (read?.lines.length ?? 0)} older lines of this job were dropped`);
    expect(lines.bytes).toBeLessThanOrEqual(1_000);
  });

  it('drops a job keepMs after its last line, and says so', () => {
    const lines = new JobLines({ keepMs: 60_000 });
    lines.add('ep', 'old', line(0, 'old'));
    lines.add('ep', 'fresh', line(50_000, 'fresh'));
    expect(lines.read('ep', 'old', 59_000)?.lines).toHaveLength(1);
    const gone = lines.read('ep', 'old', 61_000);
    expect(gone?.lines).toEqual([]);
    expect(gone?.dropped).toContain('dropped 1 min after its last line');
    expect(lines.read('ep', 'fresh', 61_000)?.lines).toHaveLength(1);
    expect(lines.read('ep', 'never', 61_000)).toBeUndefined();
  });

  it('keeps every job together under totalBytes, dropping the jobs logged to longest ago whole, and says so', () => {
    const lines = new JobLines({ totalBytes: 5_000 });
    for (let job = 0; job < 100; job++) for (let i = 0; i < 3; i++) lines.add('ep', `job-${job}`, line(job * 10 + i, `job-${job}`));
    expect(lines.bytes).toBeLessThanOrEqual(5_000);
    expect(lines.read('ep', 'job-99', 1_000)?.lines).toHaveLength(3);
    expect(lines.read('ep', 'job-0', 1_000)?.dropped).toContain("every job's lines together passed");
  });

  it('has documented defaults', () => {
    expect(JOB_LINES_LIMITS).toMatchObject({ bytesPerJob: 262_144, keepMs: 1_800_000, totalBytes: 33_554_432 });
  });
});
