/**
 * The management commands as users run them: the compiled `serverless-worker` command
 * (the run's one build of both packages) as a real child process, against the
 * management plugin on loopback: records on stdout as JSON with notes on stderr and exit
 * status 0; a failure in one line with the server's message and code, exit status 1; a
 * usage error exits 2. The commands' cases run in process (management.unit.test.ts,
 * management-crud.unit.test.ts: the same program through src/cli/program.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Template } from '../../packages/platform/src/harness/management/index.js';
import { startManagementServer, type RunningManagementServer } from '../harness/management/management-server.js';
import { failureLine, okJson } from './cli-run.js';
import { runCompiledCli } from './run-cli.js';

const API_KEY = 'compiled-cli-key';
let server: RunningManagementServer;

beforeAll(async () => {
  server = await startManagementServer({ apiKey: API_KEY });
});
afterAll(async () => {
  await server.close();
});

describe('the compiled serverless-worker command', () => {
  it('validates template files offline, and creates then lists a template over the management API', { timeout: 120_000 }, async () => {
    const validated = await runCompiledCli(['template', 'validate', 'templates/nvidia.json', 'templates/cpu.json']);
    expect(validated.code, validated.stderr).toBe(0);
    expect(validated.stdout).toContain('ok templates/nvidia.json (serverless-worker-echo-nvidia: NVIDIA, serverless)');
    const env = { SERVERLESS_WORKER_API_URL: server.baseUrl, SERVERLESS_WORKER_API_KEY: API_KEY };
    const created = await runCompiledCli(['template', 'create', '--name', 'compiled', '--image-name', 'registry.example.com/me/worker:1'], env);
    const record = okJson<Template>(created);
    expect(record).toMatchObject({ name: 'compiled', imageName: 'registry.example.com/me/worker:1', isServerless: true });
    expect(created.stderr).toContain(`created template "compiled" (id ${record.id})`);
    expect(okJson<Template[]>(await runCompiledCli(['template', 'list'], env)).map((template) => template.name)).toContain('compiled');
  });

  it('fails in one line with the exit status: 1 for a refused call, 2 for a usage error', { timeout: 120_000 }, async () => {
    const refused = await runCompiledCli(['template', 'list', '--base-url', server.baseUrl, '--api-key', 'wrong']);
    expect(refused.code).toBe(1);
    expect(failureLine(refused)).toContain('SW_UNAUTHORIZED; HTTP 401');
    const usage = await runCompiledCli(['template', 'create', '--name', 'no-image']);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("required option '--image-name <image>' not specified");
  });
});
