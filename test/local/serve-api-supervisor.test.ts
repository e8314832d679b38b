/**
 * `--serve-api` runs the worker as a supervised child process (issue 24, part 4), as
 * real child processes: a handler that ignores its signal and is cancelled, or times
 * out, ends CANCELLED or TIMED_OUT and the worker process is replaced, a handler that
 * calls process.exit() loses its job by the harness's requeue rules (FAILED
 * SW_REQUEUE_LIMIT), a stray rejection is logged; after each the local API stays up
 * and the next /runsync completes. SIGTERM stops the child with the server; a SIGKILLed
 * server's child leaves by itself.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { REPO_ROOT, runTs, ChildList } from '../child-process.js';
import { call, startServeApiProcess, waitFor, within, type ServeApiProcess } from '../kit/index.js';
import { printFigures } from '../reliability/support/figures.js';

const WORKER = join(REPO_ROOT, 'test/local/fixtures/accidents-worker.ts');
const GRACE_MS = 500;

const children = new ChildList();
afterEach(() => children.killAll());

async function startServeApi(env: Record<string, string> = {}): Promise<ServeApiProcess & { output: () => string }> {
  const started = await startServeApiProcess(children, WORKER, ['--serve-api', '--port', '0', '--no-rate-limit'], {
    env: { TIMEOUT_GRACE_MS: String(GRACE_MS), ...env },
    timeoutMs: 240_000,
  });
  return { ...started, output: started.stderr };
}

interface JobAnswer {
  id: string;
  status: string;
  output?: { pid?: number; echo?: unknown };
  error?: unknown;
}

const runsync = async (url: string, body: unknown): Promise<JobAnswer> => (await call('POST', `${url}/runsync?wait=120000`, { body })).json as JobAnswer;

/** Whether a process with this pid exists. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function errorOf(answer: JobAnswer): Record<string, unknown> {
  return (typeof answer.error === 'string' ? JSON.parse(answer.error) : answer.error) as Record<string, unknown>;
}

describe('--serve-api: the worker in a supervised child process', () => {
  it(
    'a runaway handler cancelled, one timed out, one calling process.exit, a stray rejection: each ends as it should and the next /runsync completes',
    { timeout: 240_000 },
    async () => {
      const { child, url, output } = await startServeApi();
      const figures: Record<string, number> = {};
      const first = await runsync(url, { input: { tag: 'first' } });
      expect(first).toMatchObject({ status: 'COMPLETED', output: { echo: 'first' } });
      const pids = [first.output?.pid ?? 0];
      expect(pids[0]).not.toBe(child.pid);

      /** The next /runsync completes, on a new worker process when `newProcess`; answers its pid. */
      const next = async (after: string, newProcess: boolean, since: number): Promise<void> => {
        const answer = await runsync(url, { input: { tag: `after-${after}` } });
        expect(answer, `${after}: ${output().slice(-2_000)}`).toMatchObject({ status: 'COMPLETED', output: { echo: `after-${after}` } });
        figures[`nextServedAfter_${after}_ms`] = Math.round(performance.now() - since);
        const pid = answer.output?.pid ?? 0;
        if (newProcess) expect(pids).not.toContain(pid);
        else expect(pid).toBe(pids[pids.length - 1]);
        pids.push(pid);
      };

      // Cancelled while it hangs ignoring its signal: CANCELLED at once; the child exits after its grace and is replaced.
      const { id } = (await call('POST', `${url}/run`, { body: { input: { mode: 'hang-ignore' } } })).json as { id: string };
      await waitFor(
        async () => ((await call('GET', `${url}/status/${id}`)).json as JobAnswer).status === 'IN_PROGRESS',
        'the hanging job to start',
        30_000,
        20,
      );
      const cancelledAt = performance.now();
      expect((await call('POST', `${url}/cancel/${id}`)).json).toMatchObject({ status: 'CANCELLED' });
      await next('cancel', true, cancelledAt);
      expect(((await call('GET', `${url}/status/${id}`)).json as JobAnswer).status).toBe('CANCELLED');

      // Timed out while it ignores its signal: TIMED_OUT, then a new child.
      const timeoutAt = performance.now();
      const timedOut = await runsync(url, { input: { mode: 'hang-ignore' }, policy: { executionTimeout: 5_000 } });
      expect(timedOut.status).toBe('TIMED_OUT');
      expect(errorOf(timedOut)).toMatchObject({ error_code: 'SW_EXECUTION_TIMEOUT' });
      // Timed out by the child's own runtime: its event loop turned (it ticked), so the supervisor's watchdog, for a blocked loop, kept out.
      expect(JSON.stringify(errorOf(timedOut))).not.toContain('supervisor timed it out');
      await next('timeout', true, timeoutAt + 5_000);

      // process.exit(0) in the handler: every child that takes the job exits; past maxRequeues (3) it ends FAILED.
      const exitAt = performance.now();
      const exited = await runsync(url, { input: { mode: 'exit', code: 0 } });
      expect(exited.status).toBe('FAILED');
      expect(errorOf(exited)).toMatchObject({ error_code: 'SW_REQUEUE_LIMIT' });
      figures.exitJobFailedAfterMs = Math.round(performance.now() - exitAt);
      await next('exit', true, performance.now());

      // A stray rejection: logged with its job, the same child serves on.
      const stray = await runsync(url, { input: { mode: 'stray-rejection', tag: 'serve-api' } });
      expect(stray).toMatchObject({ status: 'COMPLETED', output: { survived: 'stray-rejection', pid: pids[pids.length - 1] } });
      await waitFor(() => output().includes(`stray error from job ${stray.id}`), 'the stray error in the log', 10_000, 20);
      await next('stray', false, performance.now());

      expect(((await call('GET', `${url}/health`)).json as { jobs: { retried: number } }).jobs.retried).toBeGreaterThanOrEqual(3);
      child.kill('SIGTERM');
      const result = await within(child, '--serve-api to stop on SIGTERM', 60_000);
      expect(result.exitCode).toBe(0);
      for (const pid of pids) expect(alive(pid), `worker process ${pid}`).toBe(false);
      printFigures('serve-api supervisor', { ...figures, workerProcesses: new Set(pids).size });
    },
  );

  it("the worker process runs with glibc's malloc arenas capped (MALLOC_ARENA_MAX=2), unless the environment chose", { timeout: 240_000 }, async () => {
    const { url } = await startServeApi();
    const answer = await runsync(url, { input: { tag: 'arenas' } });
    const environ = readFileSync(`/proc/${answer.output?.pid ?? 0}/environ`, 'utf8').split('\0');
    expect(environ).toContain('MALLOC_ARENA_MAX=2');
    const chosen = await startServeApi({ MALLOC_ARENA_MAX: '4' });
    const other = await runsync(chosen.url, { input: { tag: 'arenas' } });
    expect(readFileSync(`/proc/${other.output?.pid ?? 0}/environ`, 'utf8').split('\0')).toContain('MALLOC_ARENA_MAX=4');
  });

  it('SIGTERM while the worker process is still starting: exit 0, no worker left', { timeout: 90_000 }, async () => {
    const child = runTs(WORKER, ['--serve-api', '--port', '0'], { timeout: 60_000 });
    children.push(child);
    let output = '';
    child.stderr?.on('data', (data: Buffer) => (output += data.toString('utf8')));
    // Spawned, not ready: its signal handlers are not installed yet, so the SIGTERM the server passes on ends it outright.
    await waitFor(() => /worker process started/.test(output), 'the worker process spawned', 30_000, 5);
    child.kill('SIGTERM');
    const result = await within(child, '--serve-api to stop on SIGTERM', 60_000);
    expect(result.exitCode, output).toBe(0);
  });

  it('a SIGKILLed --serve-api leaves no worker behind: the orphaned child exits by itself', { timeout: 90_000 }, async () => {
    const { child, url } = await startServeApi();
    const pid = (await runsync(url, { input: { tag: 'x' } })).output?.pid ?? 0;
    expect(alive(pid)).toBe(true);
    child.kill('SIGKILL');
    await child;
    await waitFor(() => !alive(pid), `the orphaned worker ${pid} to exit`, 30_000, 50);
  });
});
