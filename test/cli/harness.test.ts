/**
 * `serverless-worker harness` as a real child process: --help prints every flag (the one
 * child-process smoke of it);
 * it prints its base URL, serves the queue API (only the --endpoint ids given), the
 * management API and /metrics, takes the API key from the environment, refuses a
 * non-loopback host without a key, and exits 0 on SIGTERM.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ECHO_FIXTURE, REPO_ROOT, runTs, ChildList } from '../child-process.js';
import { call, errorCode, startHarnessProcess } from '../kit/index.js';
import { HARNESS_SETTINGS } from '../../packages/platform/src/cli/commands/harness-settings.js';

const CLI = join(REPO_ROOT, 'src/cli/main.ts');
const children = new ChildList();

afterEach(() => children.killAll());

const startHarness = (args: string[], env: Record<string, string> = {}) => startHarnessProcess(children, args, { env, readyText: 'auth:' });

describe('serverless-worker harness', () => {
  it('--help, from a real child process: exits 0 and prints every flag of the settings', async () => {
    // The one child-process smoke of --help; what it says of each flag (default, environment
    // variable) is checked in process by test/settings/settings-docs.unit.test.ts.
    const result = await runTs(CLI, ['harness', '--help']);
    expect(result.exitCode).toBe(0);
    const help = String(result.stdout).replace(/\s+/g, ' ');
    for (const setting of Object.values(HARNESS_SETTINGS)) expect(help, setting.flag).toContain(setting.flag);
  });

  it('serves the listed endpoints, the management API and metrics; exits 0 on SIGTERM', async () => {
    const { child, url, banner } = await startHarness(['--endpoint', 'alpha', 'beta']);
    expect(banner).toContain('endpoints: alpha, beta');
    const run = await call('POST', `${url}/v2/alpha/run`, { body: { input: {} } });
    expect(run.json).toMatchObject({ status: 'IN_QUEUE' });
    const health = await call('GET', `${url}/v2/beta/health`);
    expect(health.status).toBe(200);
    const unknown = await call('POST', `${url}/v2/gamma/run`, { body: { input: {} } });
    expect(unknown.status).toBe(404);
    expect(errorCode(unknown)).toBe('SW_ENDPOINT_NOT_FOUND');
    expect((await call('GET', `${url}/v1/templates`)).json).toEqual([]);
    expect((await call('GET', `${url}/metrics`)).status).toBe(200);
    child.kill('SIGTERM');
    expect((await child).exitCode).toBe(0);
  });

  it('a worker process joins over the worker API with the variables it printed, and runs jobs', async () => {
    const { url, banner } = await startHarness(['--endpoint', 'e2e']);
    const env = Object.fromEntries([...banner.matchAll(/export (RUNPOD_\w+)='([^']*)'/g)].map((match) => [match[1]!, match[2]!] as const));
    expect(env.RUNPOD_WEBHOOK_GET_JOB).toBe(`${url}/v2/e2e/job-take/$ID?`);
    const worker = runTs(ECHO_FIXTURE, [], { env: { ...env, RUNPOD_POD_ID: 'worker-e2e' } });
    children.push(worker);
    const answer = await call('POST', `${url}/v2/e2e/runsync`, { body: { input: { message: 'over http' } } });
    expect(answer.json).toMatchObject({ status: 'COMPLETED', output: { echo: 'over http', workerId: 'worker-e2e' } });
    worker.kill('SIGTERM');
    expect((await worker).exitCode).toBe(0);
  });

  it('takes the API key from SERVERLESS_WORKER_API_KEY', async () => {
    const { url } = await startHarness([], { SERVERLESS_WORKER_API_KEY: 'cli-key' });
    expect((await call('GET', `${url}/v2/any/health`)).status).toBe(401);
    expect((await call('GET', `${url}/v2/any/health`, { headers: { authorization: 'Bearer cli-key' } })).status).toBe(200);
  });

  it('refuses a non-loopback host without a key (exit 1), and a bad flag value (exit 2)', async () => {
    const insecure = await runTs(CLI, ['harness', '--host', '0.0.0.0', '--port', '0']);
    expect(insecure.exitCode).toBe(1);
    expect(String(insecure.stderr)).toContain('Refusing to listen on 0.0.0.0 without an API key');
    const badPort = await runTs(CLI, ['harness', '--port', 'eighty']);
    expect(badPort.exitCode).toBe(2);
    expect(String(badPort.stderr)).toContain('--port');
  });
});
