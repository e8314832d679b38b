/**
 * The job page's count of dropped lines (issue 49 item 8): it said "33 older lines of this
 * job were dropped" above all 50 of them, because the lines the job's own store
 * (launcher/job-lines.ts) dropped past its byte bound were still in the endpoint's ring and
 * shown from there. It now counts only lines in neither store. Real stores, read over HTTP
 * (/ui/api/logs of the job).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { JobLines, jobIdOfLine } from '../../packages/platform/src/harness/launcher/job-lines.js';
import { WorkerLogs } from '../../packages/platform/src/harness/launcher/worker-logs.js';
import type { LaunchedWorkersView } from '../../packages/platform/src/harness/launcher/launched-workers-view.js';
import type { LogsView } from '../../packages/platform/src/harness/dashboard/page-views.js';
import { fetchOkJson, startTestServer, type TestServer } from '../kit/index.js';

const KEY = 'dropped-key';
const AT = Date.parse('2026-12-02T10:00:00.000Z');
let server: TestServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** 50 JSON lines of job-1 captured as the launcher does, into a ring of `ringLines` and a job store of 1 KiB a job. */
async function jobPage(ringLines: number): Promise<LogsView> {
  const ring = new WorkerLogs(ringLines);
  const kept = new JobLines({ bytesPerJob: 1_024 });
  for (let i = 0; i < 50; i++) {
    const entry = ring.add('ep', { at: AT + i, workerId: 'w1', stream: 'stdout', line: `{"level":30,"requestId":"job-1","msg":"line ${i}"}` });
    const jobId = jobIdOfLine(entry.line);
    if (jobId !== undefined) kept.add('ep', jobId, entry);
  }
  const launched: LaunchedWorkersView = {
    health: () => Promise.resolve(undefined),
    logs: (endpointId, max, workerId) => ring.read(endpointId, max, workerId),
    jobLogs: (endpointId, jobId) => kept.read(endpointId, jobId, AT + 50),
    pods: () => Promise.resolve([]),
  };
  server = await startTestServer({ apiKey: KEY, launchedWorkers: launched });
  return fetchOkJson<LogsView>(`${server.url}/ui/api/logs?endpoint=ep&max=1000&job=job-1`, 'GET', undefined, { authorization: `Bearer ${KEY}` });
}

describe("a job page's dropped lines", () => {
  it('says nothing was dropped when the ring still shows every line the job store let go', async () => {
    const page = await jobPage(1_000);
    expect(page.lines).toHaveLength(50);
    expect(page.dropped).toBeUndefined();
  });

  it('counts the lines in neither store when the ring has turned over too', async () => {
    const page = await jobPage(10);
    const shown = page.lines.length;
    expect(shown).toBeLessThan(50);
    expect(page.dropped).toBe(`${50 - shown} older lines of this job were dropped: a job keeps its last 1 KiB of lines`);
  });
});
