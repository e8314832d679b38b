/**
 * `serverless-worker logs` and `serverless-worker jobs` (in process, cli-run.ts; `--follow`
 * as a real child process) against
 * a harness of our own on 127.0.0.1 (the dashboard fixture: an in-process worker whose
 * job lines the harness keeps): a job's lines, one a line in the order logged, for a person
 * on a terminal (a real pseudo-terminal) and as JSON objects when piped; `--follow`
 * prints the lines of a job submitted after it started, each once; `jobs` filters as the
 * dashboard does (an error code's beginning); a base URL without /v1 gets a 404 that
 * says to add it.
 */
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_KEY, ENDPOINT, startDashboardFixture, type DashboardFixture } from '../ui/dashboard-fixture.js';
import { ROOT, failureLine, okJson, runCli } from './cli-run.js';
import { runCliInTerminal } from './cli-terminal.js';
import { nodeArgsFor } from '../compiled-fixtures.js';

let fixture: DashboardFixture;
let env: Record<string, string>;

beforeAll(async () => {
  fixture = await startDashboardFixture();
  env = { SERVERLESS_WORKER_API_URL: `${fixture.server.url}/v1`, SERVERLESS_WORKER_API_KEY: API_KEY };
}, 60_000);

afterAll(async () => {
  await fixture?.close();
});

async function runJob(input: Record<string, unknown>): Promise<string> {
  const answer = await fetch(`${fixture.server.url}/v2/${ENDPOINT}/run`, {
    method: 'POST',
    headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ input }),
  });
  const { id } = (await answer.json()) as { id: string };
  await fixture.harness.endpoint(ENDPOINT).waitForEnd(id, 20_000);
  return id;
}

describe('serverless-worker logs and jobs', () => {
  it(
    "prints a job's lines, one a line, in the order logged: for a person on a terminal (or --pretty), JSON objects when piped (or --json)",
    { timeout: 60_000 },
    async () => {
      const id = await runJob({ mode: 'log', lines: ['alpha one', 'alpha two', 'alpha three'] });
      const [onTerminal, pretty, piped, json] = await Promise.all([
        runCliInTerminal(['logs', ENDPOINT, '--job', id], env),
        runCli(['logs', ENDPOINT, '--job', id, '--pretty'], env),
        runCli(['logs', ENDPOINT, '--job', id], env),
        runCliInTerminal(['logs', ENDPOINT, '--job', id, '--json'], env),
      ]);
      for (const run of [onTerminal, pretty]) {
        expect(run.code, run.stdout + run.stderr).toBe(0);
        const printed = run.stdout.trimEnd().split('\n');
        expect(printed.map((line) => /alpha \w+/.exec(line)?.[0])).toEqual(['alpha one', 'alpha two', 'alpha three']);
        expect(printed[0]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z in-process info alpha one/);
      }
      for (const run of [piped, json]) {
        expect(run.code, run.stdout + run.stderr).toBe(0);
        const objects = run.stdout
          .trimEnd()
          .split('\n')
          .map((line) => JSON.parse(line) as { workerId: string; stream: string; line: string });
        expect(objects.map((o) => [o.stream, /^alpha \w+/.exec(o.line)?.[0]])).toEqual([
          ['info', 'alpha one'],
          ['info', 'alpha two'],
          ['info', 'alpha three'],
        ]);
      }
    },
  );

  it('says how many lines of a job the harness no longer keeps, on stderr and in --json', { timeout: 60_000 }, async () => {
    // 210 lines at once: the in-process buffer keeps a job's last 200 (JOB_LOG_LIMITS.linesPerJob).
    const lines = Array.from({ length: 210 }, (_, i) => `gamma ${i}`);
    const id = await runJob({ mode: 'log', lines, together: true });
    const run = await runCli(['logs', ENDPOINT, '--job', id, '--tail', '1000'], env);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.match(/gamma \d+/g)).toEqual(lines.slice(10));
    expect(run.stderr).toContain(
      'serverless-worker: 10 lines of this job no longer kept: 10 older lines of this job were dropped: a job keeps its last 200 lines',
    );
    const answer = (await (
      await fetch(`${fixture.server.url}/ui/api/logs?endpoint=${ENDPOINT}&job=${id}`, { headers: { authorization: `Bearer ${API_KEY}` } })
    ).json()) as { droppedLines?: number; dropped?: string };
    expect(answer.droppedLines).toBe(10);
  });

  it('--follow prints the lines that come after it started, each once', { timeout: 60_000 }, async () => {
    // A job that logs a line every 700 ms: its lines come while the CLI reads.
    const id = await (async () => {
      const answer = await fetch(`${fixture.server.url}/v2/${ENDPOINT}/run`, {
        method: 'POST',
        headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ input: { mode: 'log', lines: ['beta one', 'beta two', 'beta three'], delayMs: 700 } }),
      });
      return ((await answer.json()) as { id: string }).id;
    })();
    const reader = spawn(process.execPath, [...nodeArgsFor('src/cli/main.ts'), 'logs', ENDPOINT, '--follow', '--interval', '200', '--job', id], {
      cwd: ROOT,
      env: { ...process.env, ...env },
    });
    let stdout = '';
    let stderr = '';
    reader.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    reader.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    try {
      await fixture.harness.endpoint(ENDPOINT).waitForEnd(id, 20_000);
      await expect.poll(() => stdout.match(/beta \w+/g) ?? [], { timeout: 20_000 }).toEqual(['beta one', 'beta two', 'beta three']);
      // Further reads add nothing: each line once.
      await new Promise((resolve) => setTimeout(resolve, 800));
      expect(stdout.match(/beta \w+/g), stderr).toEqual(['beta one', 'beta two', 'beta three']);
      expect(reader.exitCode).toBeNull();
    } finally {
      reader.kill('SIGTERM');
    }
  });

  it('lists jobs filtered as the dashboard does: an error code by its beginning, states, --json', { timeout: 60_000 }, async () => {
    const failed = await runJob({ mode: 'fail-long', chars: 5 });
    const done = await runJob({ mode: 'echo', marker: 'listed' });
    const page = okJson<{ total: number; jobs: Array<{ id: string; status: string; errorCode?: string }> }>(
      await runCli(['jobs', ENDPOINT, '--error', 'SW_HANDLER', '--json'], env),
    );
    expect(page.jobs.map((job) => job.id)).toContain(failed);
    expect(page.jobs.map((job) => job.id)).not.toContain(done);
    expect(page.jobs.every((job) => job.status === 'FAILED')).toBe(true);
    const table = await runCli(['jobs', ENDPOINT, '--state', 'COMPLETED', '--text', 'listed'], env);
    expect(table.code, table.stderr).toBe(0);
    const rows = table.stdout.trimEnd().split('\n');
    expect(rows[0]).toMatch(/^ID\s+STATUS\s+KIND\s+SUBMITTED/);
    expect(rows.slice(1).map((row) => row.split(/\s+/)[0])).toEqual([done]);
    expect(table.stderr).toContain('1 job matches');
    const bad = await runCli(['jobs', ENDPOINT, '--kind', 'batch'], env);
    expect(bad.code).toBe(1);
    expect(failureLine(bad)).toContain('kind must be run or runsync');
  });

  it('says to add /v1 when the base URL lacks it and the server answers 404', async () => {
    const run = await runCli(['endpoint', 'list'], { ...env, SERVERLESS_WORKER_API_URL: fixture.server.url });
    expect(run.code).toBe(1);
    expect(failureLine(run)).toContain(
      `does not end in /v1, where the management API is: set SERVERLESS_WORKER_API_URL (or --base-url) to ${fixture.server.url}/v1`,
    );
  });
});
