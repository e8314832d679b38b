/**
 * `--serve-api --watch` (the scaffold's `npm run dev`), a real child process on a
 * scaffold-like worker (src/worker.ts importing src/answer.ts, run through tsx): a saved
 * source file restarts the worker child only. The queue API stays up on the same port, a
 * finished job is still there, the job in progress on the old child goes back to the
 * queue and completes on the new one, and a queued job completes there too, with the new
 * code (it used to restart the whole process, about 10 s, every job gone).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ChildList, REPO_ROOT } from '../child-process.js';
import { call, startServeApiProcess, waitFor } from '../kit/index.js';

const children = new ChildList();
const dirs: string[] = [];
afterEach(async () => {
  await children.killAll();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const WORKER = `import { serve } from 'serverless-worker';
import { ANSWER } from './answer.js';

await serve<{ ms?: number }>(
  async (job, ctx) => {
    // The old code holds its job until the restart; the new one answers at once.
    if (ANSWER === 'v1' && (job.input.ms ?? 0) > 0) {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(resolve, job.input.ms);
        ctx.signal.addEventListener('abort', () => {
          clearTimeout(timer);
          reject(ctx.signal.reason);
        });
      });
    }
    return { answer: ANSWER, pid: process.pid };
  },
  { concurrency: 1 },
);
`;

interface Status {
  status: string;
  output?: { answer: string; pid: number };
}

describe('--serve-api --watch', () => {
  it('restarts only the worker child on a save: the API, finished and queued jobs stay; the running job is requeued', { timeout: 120_000 }, async () => {
    mkdirSync(join(REPO_ROOT, 'test-artifacts'), { recursive: true });
    const project = mkdtempSync(join(REPO_ROOT, 'test-artifacts', 'dev-watch-'));
    dirs.push(project);
    const src = join(project, 'src');
    mkdirSync(src);
    writeFileSync(join(src, 'worker.ts'), WORKER);
    writeFileSync(join(src, 'answer.ts'), "export const ANSWER: string = 'v1';\n");
    // Beside the script, as in a scaffold (and so it runs through tsx, which compiles each start anew).
    writeFileSync(join(src, 'test_input.json'), '{"input":{}}\n');
    const { url, stderr } = await startServeApiProcess(children, join(src, 'worker.ts'), ['--serve-api', '--watch', '--port', '0']);
    const status = async (id: string): Promise<Status> => (await call('GET', `${url}/v2/local/status/${id}`)).json as Status;

    const finished = (await call('POST', `${url}/v2/local/runsync`, { body: { input: {} } })).json as Status & { id: string };
    expect(finished).toMatchObject({ status: 'COMPLETED', output: { answer: 'v1' } });
    const firstPid = finished.output?.pid;
    const running = ((await call('POST', `${url}/v2/local/run`, { body: { input: { ms: 60_000 } } })).json as { id: string }).id;
    await waitFor(async () => (await status(running)).status === 'IN_PROGRESS', 'the long job running on the first child', 30_000, 20);
    const queued = ((await call('POST', `${url}/v2/local/run`, { body: { input: {} } })).json as { id: string }).id;
    expect((await status(queued)).status).toBe('IN_QUEUE');

    writeFileSync(join(src, 'answer.ts'), "export const ANSWER: string = 'v2';\n");

    for (const id of [running, queued]) {
      const done = await waitFor(
        async () => {
          const read = await status(id);
          return read.status === 'COMPLETED' ? read : undefined;
        },
        `job ${id} COMPLETED on the new child`,
        60_000,
        50,
      );
      expect(done.output?.answer).toBe('v2');
      expect(done.output?.pid).not.toBe(firstPid);
    }
    // The harness kept its finished job, and counted the requeue.
    expect(await status(finished.id)).toMatchObject({ status: 'COMPLETED', output: { answer: 'v1' } });
    const health = (await call('GET', `${url}/v2/local/health`)).json as { jobs: { completed: number; retried: number } };
    expect(health.jobs).toMatchObject({ completed: 3, retried: 1 });
    expect(stderr()).toContain('restarting the worker process');
  });
});
