/**
 * The management API end to end, as a worker-image author's CI would use it: the
 * CLI pushes a template and creates an endpoint on a running harness (real HTTP on
 * 127.0.0.1), a real worker process joins that endpoint through the RUNPOD_* variables
 * of the worker API, and the endpoint answers /runsync through /v2.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Harness } from '../../src/harness/index.js';
import { createHarnessServer, type HarnessServer } from '../../packages/platform/src/harness/server-api.js';
import { workerEnvFor } from '../../packages/platform/src/harness/worker-api/index.js';
import { ECHO_FIXTURE, REPO_ROOT, runTs } from '../child-process.js';

const API_KEY = 'e2e-management-key';
const CLI = join(REPO_ROOT, 'src/cli/main.ts');
let server: HarnessServer | undefined;
let stopWorker: (() => void) | undefined;

afterEach(async () => {
  stopWorker?.();
  await server?.close();
  server = undefined;
});

describe('endpoint created through /v1, called through /v2 by a worker', () => {
  it('pushes a template, creates an endpoint, and a worker process serves it', { timeout: 120_000 }, async () => {
    const harness = new Harness({ autoCreateEndpoints: false });
    server = await createHarnessServer({ harness, port: 0, apiKey: API_KEY, rateLimits: false });
    const cliEnv = { SERVERLESS_WORKER_API_URL: `${server.url}/v1`, SERVERLESS_WORKER_API_KEY: API_KEY };

    const pushed = await runTs(CLI, ['template', 'push', 'templates/cpu.json', '--image', 'example/echo:e2e'], { env: cliEnv });
    expect(pushed.exitCode, String(pushed.stderr)).toBe(0);
    const template = JSON.parse(String(pushed.stdout)) as { id: string; imageName: string };
    expect(template.imageName).toBe('example/echo:e2e');

    const created = await runTs(CLI, ['endpoint', 'create', '--template-id', template.id, '--name', 'echo-e2e', '--workers-max', '2'], {
      env: cliEnv,
    });
    expect(created.exitCode, String(created.stderr)).toBe(0);
    const endpoint = JSON.parse(String(created.stdout)) as { id: string; templateId: string };
    expect(endpoint.templateId).toBe(template.id);

    // Before any worker joins, the endpoint exists and queues.
    const health = await fetch(`${server.url}/v2/${endpoint.id}/health`, { headers: { authorization: `Bearer ${API_KEY}` } });
    expect(health.status).toBe(200);

    const worker = runTs(ECHO_FIXTURE, [], {
      env: { ...workerEnvFor(server.url, endpoint.id, { apiKey: API_KEY, pingIntervalMs: 500 }), RUNPOD_POD_ID: 'e2e-worker' },
      timeout: 100_000,
    });
    stopWorker = () => worker.kill('SIGKILL');

    const answer = await fetch(`${server.url}/v2/${endpoint.id}/runsync?wait=60000`, {
      method: 'POST',
      headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ input: { message: 'through v1 and v2', shout: true } }),
    });
    expect(answer.status).toBe(200);
    expect(await answer.json()).toMatchObject({ status: 'COMPLETED', output: { echo: 'THROUGH V1 AND V2', workerId: 'e2e-worker' } });

    const pods = (await (await fetch(`${server.url}/v1/pods`, { headers: { authorization: `Bearer ${API_KEY}` } })).json()) as Array<{ id: string }>;
    expect(pods.map((pod) => pod.id)).toContain('e2e-worker');

    worker.kill('SIGTERM');
    const exit = await worker;
    expect(exit.exitCode).toBe(0);
    stopWorker = undefined;
  });
});
