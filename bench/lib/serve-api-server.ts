/**
 * @module bench/lib/serve-api-server
 * Our local API as the burst benches start it: the compiled bench worker's `--serve-api
 * --no-rate-limit` (bench/children/platform-worker.ts, concurrency as many as the clients), run
 * by this process's node with `flags` before the script; and a wait for a first `/runsync`.
 */
import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import { REPO_ROOT, track } from './child.js';
import { childScript } from './compiled.js';
import { runOneJob, type QueueClient } from './http-client.js';

export async function spawnServeApi(port: number, clients: number, flags: readonly string[] = [], stdio: StdioOptions = 'ignore'): Promise<ChildProcess> {
  const script = process.env.BENCH_SERVE_API_SCRIPT ?? (await childScript('bench/children/platform-worker.ts', 'compiled'));
  return track(
    spawn(process.execPath, [...flags, script, '--port', String(port), '--serve-api', '--no-rate-limit'], {
      cwd: REPO_ROOT,
      env: { ...process.env, BENCH_CONCURRENCY: String(clients) },
      stdio,
    }),
  );
}

/** Resolves once `server` answered a `/runsync` through `client` (2 minutes at most, or until it exits). */
export async function firstRunsync(server: ChildProcess, client: QueueClient, name: string): Promise<void> {
  for (let tries = 0; ; tries++) {
    try {
      await runOneJob(client, 'runsync');
      return;
    } catch (error) {
      if (tries > 600 || server.exitCode !== null) throw new Error(`${name} did not answer /runsync: ${String(error)}`, { cause: error });
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}
