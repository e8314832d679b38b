/**
 * Log lines of one millisecond keep their order (issue 35 item 6): each line gets a
 * sequence number where the harness captures it (harness/launcher/log-order.ts), and every place
 * that shows lines orders them by (time, sequence). Here 150 lines of one job are captured
 * in one millisecond through the real stores, interleaving the three kinds a job page
 * merges (a launched worker's JSON line naming the job, kept in the endpoint's ring and
 * under the job; its plain line naming the job, in the ring only; an in-process worker's
 * ctx.log line), and read back over HTTP (/ui/api/logs, of the job and of the worker) in the
 * order captured. `serverless-worker logs --follow` prints each new line once, by number:
 * lines of one millisecond, and a line read after one of a later time.
 */
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { JobLogBuffer, tapJobLogs } from '../../packages/platform/src/harness/dashboard/job-log-tap.js';
import { JobLines, jobIdOfLine } from '../../packages/platform/src/harness/launcher/job-lines.js';
import { WorkerLogs } from '../../packages/platform/src/harness/launcher/worker-logs.js';
import type { LaunchedWorkersView } from '../../packages/platform/src/harness/launcher/launched-workers-view.js';
import type { LogsView } from '../../packages/platform/src/harness/dashboard/page-views.js';
import { NewLines } from '../../packages/platform/src/cli/commands/logs.js';
import { fetchOkJson, startTestServer, type TestServer } from '../kit/index.js';

const KEY = 'order-key';
const AT = Date.parse('2026-11-27T10:00:00.123Z');
let server: TestServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('log lines of one millisecond', () => {
  it('are read back over HTTP in the order captured, whatever store kept them', async () => {
    const ring = new WorkerLogs(1_000);
    const kept = new JobLines();
    const launched: LaunchedWorkersView = {
      health: () => Promise.resolve(undefined),
      logs: (endpointId, max, workerId) => ring.read(endpointId, max, workerId),
      jobLogs: (endpointId, jobId) => kept.read(endpointId, jobId, AT),
      pods: () => Promise.resolve([]),
    };
    // What the launcher does with each line a worker writes (launcher.ts #onLine), at one millisecond.
    const capture = (line: string): void => {
      const entry = ring.add('ep', { at: AT, workerId: 'w1', stream: 'stdout', line });
      const jobId = jobIdOfLine(line);
      if (jobId !== undefined) kept.add('ep', jobId, entry);
    };
    const buffer = new JobLogBuffer();
    const inProcess = tapJobLogs(pino({ level: 'info' }, new Writable({ write: (_c, _e, done) => done() })), buffer, () => AT).child({ requestId: 'job-1' });
    const expected: string[] = [];
    for (let i = 0; i < 50; i++) {
      capture(`{"level":30,"requestId":"job-1","msg":"json ${i}"}`);
      expected.push(`json ${i}`);
      inProcess.info(`tapped ${i}`);
      expected.push(`tapped ${i}`);
      capture(`job-1 plain ${i}`);
      expected.push(`plain ${i}`);
    }
    server = await startTestServer({ apiKey: KEY, launchedWorkers: launched, dashboard: { jobLogs: buffer } });
    const read = (query: string) =>
      fetchOkJson<LogsView>(`${server!.url}/ui/api/logs?endpoint=ep&max=1000&${query}`, 'GET', undefined, { authorization: `Bearer ${KEY}` });
    const job = await read('job=job-1');
    expect(job.lines).toHaveLength(150);
    expect(job.lines.every((line) => line.at === AT)).toBe(true);
    expect(job.lines.map((line) => /(json|tapped|plain) \d+/.exec(line.line)?.[0])).toEqual(expected);
    expect(job.lines.every((line, i) => i === 0 || line.seq > (job.lines[i - 1]?.seq ?? 0))).toBe(true);
    // The worker's tail: its 100 lines, in the order it wrote them.
    const tail = await read('worker=w1');
    expect(tail.lines.map((line) => /(json|plain) \d+/.exec(line.line)?.[0])).toEqual(expected.filter((text) => !text.startsWith('tapped')));
  });

  it('are each printed once by logs --follow, in order, and a line read after a later one is printed too', () => {
    const line = (seq: number, at: number, text: string) => ({ at, seq, workerId: 'w1', stream: 'stdout', line: text });
    const follow = new NewLines();
    const first = [line(1, AT, 'same'), line(2, AT, 'same'), line(3, AT, 'other')];
    expect(follow.take(first).map((l) => l.seq)).toEqual([1, 2, 3]);
    // The next read overlaps: two more equal lines of that millisecond, and an in-process line logged earlier but read now.
    const second = [line(10, AT - 5, 'logged earlier'), ...first, line(4, AT, 'same'), line(5, AT, 'same')];
    expect(follow.take(second).map((l) => l.seq)).toEqual([10, 4, 5]);
    expect(follow.take(second)).toEqual([]);
    // A restarted harness numbers from 1 again: its lines are new.
    expect(follow.take([line(1, AT + 1_000, 'after the restart')]).map((l) => l.line)).toEqual(['after the restart']);
  });
});
