/**
 * `serverless-worker harness` liveness flags and SIGTERM drain (issue 13), as real
 * child processes: a harness, and the platform fixture worker joined with the
 * variables it printed. A killed worker's job is back in the queue within about
 * interval x missed + 1 s (printed; asserted with a generous bound); SIGTERM lets the
 * running job finish, answers the waiting /runsync, and says what the in-memory
 * store loses.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { REPO_ROOT, runTs, ChildList, type TsChild } from '../child-process.js';
import { call, startHarnessProcess, waitFor, type HarnessProcess } from '../kit/index.js';

const CLI = join(REPO_ROOT, 'src/cli/main.ts');
const WORKER = join(REPO_ROOT, 'test/platform/fixtures/platform-worker.ts');
type Child = TsChild;
const children = new ChildList();

afterEach(() => children.killAll());

async function startHarness(args: string[]): Promise<HarnessProcess & { env: Record<string, string> }> {
  const harness = await startHarnessProcess(children, ['--endpoint', 'drain', ...args], { readyText: 'RUNPOD_ENDPOINT_ID', timeoutMs: 120_000 });
  return { ...harness, env: harness.workerEnv };
}

function startWorker(env: Record<string, string>, workerId: string): Child {
  const worker = runTs(WORKER, [], { env: { ...env, RUNPOD_POD_ID: workerId, LOG_LEVEL: 'warn' }, timeout: 120_000 });
  children.push(worker);
  return worker;
}

const statusOf = async (url: string, id: string) => (await call('GET', `${url}/v2/drain/status/${id}`)).json as { status: string; retries?: number };

/** Preloaded into a harness: says how many SIGTERM listeners it has as it prints its banner; can signal it while it starts. */
const SIGNAL_PROBE = `--import ${join(REPO_ROOT, 'test/fixtures/harness-signal-probe.mjs')}`;

describe('serverless-worker harness: liveness flags and drain', () => {
  it(
    "--ping-interval-ms and --missed-pings: printed for workers, and a killed worker's job is requeued within about interval x missed + 1 s",
    { timeout: 120_000 },
    async () => {
      const { url, env } = await startHarness(['--ping-interval-ms', '500', '--missed-pings', '2']);
      expect(env.RUNPOD_PING_INTERVAL).toBe('500');
      const worker = startWorker(env, 'doomed');
      const { id } = (await call('POST', `${url}/v2/drain/run`, { body: { input: { mode: 'sleep', ms: 60_000 } } })).json as { id: string };
      await waitFor(async () => (await statusOf(url, id)).status === 'IN_PROGRESS', 'the job to start', 60_000);
      const killedAt = Date.now();
      worker.kill('SIGKILL');
      await waitFor(async () => (await statusOf(url, id)).status === 'IN_QUEUE', 'the job back in the queue', 20_000);
      const requeuedMs = Date.now() - killedAt;
      expect((await statusOf(url, id)).retries).toBe(1);
      // Expected about 500 x 2 + 1 000 = 2 000 ms; the bound leaves room for a loaded machine.
      expect(requeuedMs).toBeLessThan(15_000);
      console.log(`[harness-drain] killed worker's job requeued ${requeuedMs} ms after SIGKILL (ping 500 ms x 2 missed + sweep: about 2 000 ms expected)`);
    },
  );

  it('listens for SIGTERM before its banner is out: a signal sent the moment the banner is read drains it (exit 0)', { timeout: 120_000 }, async () => {
    const { child, stderr } = await startHarnessProcess(children, ['--endpoint', 'drain'], {
      readyText: 'RUNPOD_ENDPOINT_ID',
      timeoutMs: 120_000,
      env: { NODE_OPTIONS: SIGNAL_PROBE },
    });
    child.kill('SIGTERM');
    const result = await child;
    // Printed before the banner's bytes leave the process: the banner cannot be read before the handler is there.
    expect(stderr()).toContain('[signal-probe] SIGTERM listeners at the banner: 1');
    expect({ exitCode: result.exitCode, signal: result.signal }).toEqual({ exitCode: 0, signal: undefined });
    expect(stderr()).toContain('harness drained');
  });

  it('a SIGTERM while it starts stops it once it is up: drained, exit 0', { timeout: 120_000 }, async () => {
    const result = await runTs(CLI, ['harness', '--port', '0', '--endpoint', 'drain'], {
      env: { NODE_OPTIONS: SIGNAL_PROBE, PROBE_SIGTERM_ON_LISTEN: '1' },
      timeout: 120_000,
    });
    const stderr = String(result.stderr);
    expect(stderr).toContain('[signal-probe] SIGTERM sent while starting');
    expect({ exitCode: result.exitCode, signal: result.signal }).toEqual({ exitCode: 0, signal: undefined });
    expect(stderr).toContain('shutdown signal received: draining');
    expect(stderr).toContain('harness drained');
  });

  it(
    'SIGTERM drains: no new job is handed out, the running job finishes and its /runsync is answered, the queued one is reported lost',
    { timeout: 120_000 },
    async () => {
      const { child, url, env, stderr } = await startHarness(['--drain-timeout-ms', '30000', '--ping-interval-ms', '500']);
      void startWorker(env, 'drainer');
      const runsync = call('POST', `${url}/v2/drain/runsync`, { body: { input: { mode: 'sleep', ms: 3_000, tag: 'running' } } });
      await waitFor(
        async () => ((await call('GET', `${url}/v2/drain/health`)).json as { jobs: { inProgress: number } }).jobs.inProgress === 1,
        'the job to run',
        60_000,
      );
      // A second job waits behind it (the worker takes one at a time).
      const queued = (await call('POST', `${url}/v2/drain/run`, { body: { input: { mode: 'echo', tag: 'queued' } } })).json as { id: string };
      const signalledAt = Date.now();
      child.kill('SIGTERM');
      const answer = await runsync;
      expect(answer.json).toMatchObject({ status: 'COMPLETED', output: { workerId: 'drainer', tag: 'running' } });
      const result = await child;
      expect(result.exitCode).toBe(0);
      const logs = stderr();
      expect(logs).toContain('harness draining');
      expect(logs).toContain('the job store is in memory, so 0 running and 1 queued job(s) are lost');
      expect(queued.id).toBeTruthy();
      console.log(
        `[harness-drain] SIGTERM with one running and one queued job: drained and exited ${Date.now() - signalledAt} ms later; the running job's /runsync answered COMPLETED`,
      );
    },
  );
});
