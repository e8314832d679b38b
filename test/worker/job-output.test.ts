/**
 * What a handler prints is a line of its job (worker/job-output.ts), with real child
 * processes in each mode: in the dry run each console line during the job is a JSON log
 * line on the same stream carrying the job's id, in the order printed, and a line printed
 * at start-up, outside any job, is printed as it was; under --serve-api and from a
 * launched worker, the job page's lines (GET /ui/api/logs?job=) hold what the handler
 * printed for that job, and only for it (four jobs at once on one worker).
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ChildList, REPO_ROOT, jsonLines, runTs } from '../child-process.js';
import { nodeCommandFor } from '../compiled-fixtures.js';
import { startLauncherHarness, type LauncherHarness } from '../harness/launcher/launcher-setup.js';
import { call, startServeApiProcess, waitFor } from '../kit/index.js';

const PRINTING = join(REPO_ROOT, 'test/fixtures/workers/printing.ts');

interface Printed {
  requestId?: string;
  stream?: string;
  level?: number;
  msg?: string;
  status?: string;
  id?: string;
}

describe('what a handler prints (dry run, a real child process)', () => {
  it('is a JSON line of its job on the stream it was printed on, in order; start-up output is untouched', async () => {
    const result = await runTs(PRINTING, ['--test-input', '{"input":{"tag":"t1"}}']);
    expect(result.exitCode).toBe(0);
    const stdout = String(result.stdout);
    const out = jsonLines(stdout) as Printed[];
    const record = out[out.length - 1] as Printed;
    expect(record.status).toBe('COMPLETED');
    const id = record.id as string;
    expect(stdout.split('\n')[0]).toBe('PRINTED AT START-UP');
    expect(out.filter((line) => line.requestId === id).map((line) => [line.stream, line.level, line.msg])).toEqual([
      ['stdout', 30, 'first t1'],
      ['stdout', 30, 'partial t1'],
      ['stdout', 30, 'two'],
      ['stdout', 30, 'lines t1'],
      [undefined, undefined, undefined],
    ]);
    // A line that was a JSON object already stays the handler's own, the job's id added.
    expect(stdout).toContain(`{"event":"own","tag":"t1","requestId":"${id}"}`);
    const err = (jsonLines(String(result.stderr)) as Printed[]).filter((line) => line.stream === 'stderr');
    expect(err.map((line) => [line.requestId, line.level, line.msg])).toEqual([[id, 50, 'on stderr t1']]);
  });
});

const children = new ChildList();
let launched: LauncherHarness | undefined;
afterEach(async () => {
  await children.killAll();
  await launched?.close();
  launched = undefined;
}, 60_000);

const TAGS = ['a', 'b', 'c', 'd'];

/** The messages of the job page's lines of `jobId`, as the dashboard reads them. */
async function jobPageLines(url: string, endpointId: string, jobId: string): Promise<string> {
  const answer = (await call('GET', `${url}/ui/api/logs?endpoint=${endpointId}&job=${jobId}`)).json as { lines: Array<{ line: string }> };
  return answer.lines.map((line) => line.line).join('\n');
}

function expectOwnLines(text: string, tag: string): void {
  for (const printed of [`first ${tag}`, `on stderr ${tag}`, `partial ${tag}`, `lines ${tag}`]) expect(text).toContain(printed);
  for (const other of TAGS.filter((t) => t !== tag)) expect(text).not.toContain(`first ${other}`);
}

describe('what a handler prints, on the job page', () => {
  it('--serve-api: the supervised worker child prints for four jobs at once; each job page has its own lines', { timeout: 90_000 }, async () => {
    const { url } = await startServeApiProcess(children, PRINTING, ['--serve-api', '--port', '0']);
    const ids = await Promise.all(
      TAGS.map(async (tag) => ((await call('POST', `${url}/v2/local/run`, { body: { input: { tag } } })).json as { id: string }).id),
    );
    for (const id of ids) expect((await call('GET', `${url}/v2/local/status-sync/${id}?wait=60000`)).json).toMatchObject({ status: 'COMPLETED' });
    for (const [index, id] of ids.entries()) {
      const tag = TAGS[index] as string;
      const text = await waitFor(
        async () => {
          const lines = await jobPageLines(url, 'local', id);
          return lines.includes(`lines ${tag}`) ? lines : undefined;
        },
        `job ${tag}'s printed lines on its page`,
        30_000,
        50,
      );
      expectOwnLines(text, tag);
    }
  });

  it('a launched worker process: its printed lines are on the job page', { timeout: 180_000 }, async () => {
    launched = await startLauncherHarness({ images: { 'test/printing:1': { command: nodeCommandFor(PRINTING), cwd: REPO_ROOT } } });
    const h = launched;
    const endpoint = await h.createEndpoint({ workersMin: 0, workersMax: 1 }, { imageName: 'test/printing:1' });
    const ids = await Promise.all(TAGS.map((tag) => h.run(endpoint.id, { tag })));
    for (const id of ids) await waitFor(async () => (await h.status(endpoint.id, id)).status === 'COMPLETED', `job ${id} COMPLETED`, 120_000, 50);
    for (const [index, id] of ids.entries()) {
      const tag = TAGS[index] as string;
      const text = await waitFor(
        async () => {
          const lines = await jobPageLines(h.server.url, endpoint.id, id);
          return lines.includes(`lines ${tag}`) ? lines : undefined;
        },
        `job ${tag}'s printed lines on its page`,
        30_000,
        50,
      );
      expectOwnLines(text, tag);
    }
  });
});
