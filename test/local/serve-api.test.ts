/**
 * `--serve-api` as a real child process: it prints its base URL (the test reads the
 * port from it, since it listens on port 0), answers curl-like requests and the
 * official openai client, honours --api-key, refuses a non-loopback host without a
 * key, and exits 0 on SIGTERM.
 */
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { REPO_ROOT, runTs, ChildList, ECHO_FIXTURE } from '../child-process.js';
import { call, errorCode, startServeApiProcess } from '../kit/index.js';

const ECHO = join(REPO_ROOT, 'examples/echo/worker.ts');
const OPENAI = join(REPO_ROOT, 'examples/openai/worker.ts');

const children = new ChildList();

afterEach(() => children.killAll());

/** Start a worker with `args` and wait for the URL it prints (bounded: the child's own start-up). */
const startServeApi = (file: string, args: string[], env: Record<string, string> = {}) => startServeApiProcess(children, file, args, { env });

describe('--serve-api (real child processes)', () => {
  it('serves the queue API with the worker in a child process, prints a curl example, and exits 0 on SIGTERM', async () => {
    const { child, url, banner } = await startServeApi(ECHO, ['--serve-api', '--port', '0']);
    // The curl example carries the test_input.json found beside the worker.
    expect(banner).toContain(
      `curl -X POST ${url}/v2/local/runsync -H 'content-type: application/json' -d '{"input":{"message":"hello from the dry run","shout":false}}'`,
    );
    expect(banner).toContain('no API key: loopback only');
    expect(banner).toContain(
      "rate limits (the platform's, per endpoint: 429 past them; --no-rate-limit turns them off): /runsync 2000 per 10 s (400 at once), /run 1000 per 10 s",
    );
    // The dashboard: its URL in the banner, its submit form prefilled with the same test input.
    expect(banner).toContain(`dashboard: ${url}/ui`);
    expect((await call('GET', `${url}/ui/api/overview`)).json).toMatchObject({ testInput: { input: { message: 'hello from the dry run', shout: false } } });
    // The worker's endpoint is declared by --serve-api: not listed (or warned about) as made on first use.
    expect((await call('GET', `${url}/ui/api/overview`)).json).toMatchObject({ createdOnUse: [] });

    const sync = await call('POST', `${url}/v2/local/runsync`, { body: { input: { message: 'hi', shout: true } } });
    expect(sync.status).toBe(200);
    expect(sync.json).toMatchObject({ status: 'COMPLETED', output: { echo: 'HI' } });

    const { id } = (await call('POST', `${url}/v2/local/run`, { body: { input: { message: 'later' } } })).json as { id: string };
    const done = await call('GET', `${url}/v2/local/status-sync/${id}?wait=60000`);
    expect(done.json).toMatchObject({ id, status: 'COMPLETED', output: { echo: 'later' } });
    expect(((await call('GET', `${url}/v2/local/health`)).json as { workers: { idle: number } }).workers.idle).toBe(1);
    expect((await call('GET', `${url}/metrics`)).text).toContain('serverless_worker_jobs_total{status="COMPLETED"} 2');
    // The job page's lines: the child worker's ctx.log line for this job reached the dashboard (child-log-lines.ts).
    const logs = (await call('GET', `${url}/ui/api/logs?endpoint=local&job=${id}`)).json as { inProcess: boolean; lines: Array<{ line: string }> };
    expect(logs.inProcess).toBe(true);
    expect(logs.lines.map((line) => line.line).join('\n')).toContain('echoing {"length":5}');

    child.kill('SIGTERM');
    const result = await child;
    expect(result.exitCode).toBe(0);
  });

  it('--no-rate-limit: the banner says the limits are off and requests past them are served', async () => {
    const { url, banner } = await startServeApi(ECHO_FIXTURE, ['--serve-api', '--port', '0', '--no-rate-limit']);
    expect(banner).toContain('rate limits: off (--no-rate-limit)');
    // /purge-queue allows 2 per 10 s with the limits on.
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push((await call('POST', `${url}/v2/local/purge-queue`)).status);
    expect(answers).toEqual([200, 200, 200, 200]);
  });

  it('answers at the root too, refuses input the worker’s schema refuses with 400, and serves /openapi.json and /docs', { timeout: 90_000 }, async () => {
    const { url, banner } = await startServeApi(ECHO_FIXTURE, ['--serve-api', '--port', '0']);
    expect(banner).toContain(`${url}/docs`);
    const sync = await call('POST', `${url}/runsync`, { body: { input: { message: 'root' } } });
    expect(sync.json).toMatchObject({ status: 'COMPLETED', output: { echo: 'root' } });
    const { id } = (await call('POST', `${url}/run`, { body: { input: { message: 'later' } } })).json as { id: string };
    expect((await call('GET', `${url}/status-sync/${id}?wait=60000`)).json).toMatchObject({ id, status: 'COMPLETED' });
    expect((await call('GET', `${url}/health`)).status).toBe(200);
    const refused = await call('POST', `${url}/runsync`, { body: { input: { message: '' } } });
    expect(refused.status).toBe(400);
    expect(errorCode(refused)).toBe('SW_INPUT_VALIDATION');
    const doc = (await call('GET', `${url}/openapi.json`)).json as { components: { schemas: Record<string, { properties: { input: unknown } }> } };
    expect(doc.components.schemas.JobRequest_local?.properties.input).toMatchObject({ required: ['message'] });
    expect((await call('GET', `${url}/docs`)).status).toBe(200);
  });

  it('--rp_serve_api with an API key from the environment: 401 without it', async () => {
    const { url, banner } = await startServeApi(ECHO_FIXTURE, ['--rp_serve_api', '--port=0'], { SERVERLESS_WORKER_API_KEY: 'child-key' });
    expect(banner).toContain('API key required');
    expect(banner).not.toContain('child-key');
    const refused = await call('POST', `${url}/v2/local/runsync`, { body: { input: { message: 'x' } } });
    expect(refused.status).toBe(401);
    expect(errorCode(refused)).toBe('SW_UNAUTHORIZED');
    const accepted = await call('POST', `${url}/v2/local/runsync`, { body: { input: { message: 'x' } }, headers: { authorization: 'Bearer child-key' } });
    expect(accepted.json).toMatchObject({ status: 'COMPLETED' });
  });

  it('the openai example answers the official openai client, plain and streamed', async () => {
    const { url } = await startServeApi(OPENAI, ['--serve-api', '--port', '0']);
    const client = new OpenAI({ apiKey: 'unused', baseURL: `${url}/v2/local/openai/v1`, maxRetries: 0 });
    const plain = await client.chat.completions.create({ model: 'reverse-words-1', messages: [{ role: 'user', content: 'hello big world' }] });
    expect(plain.choices[0]?.message.content).toBe('world big hello');
    const stream = await client.chat.completions.create({ model: 'reverse-words-1', messages: [{ role: 'user', content: 'x y' }], stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe('y x');
  });

  it('refuses a non-loopback host without an API key: exit 1, SW_INSECURE_BIND', async () => {
    const child = runTs(ECHO_FIXTURE, ['--serve-api', '--host', '0.0.0.0', '--port', '0']);
    children.push(child);
    const result = await child;
    expect(result.exitCode).toBe(1);
    expect(String(result.stderr)).toContain('SW_INSECURE_BIND');
  });
});
