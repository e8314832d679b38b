/**
 * `serverless-worker harness --image NAME=COMMAND` as a real child process: an
 * endpoint made through /v1 on a template with that imageName gets its workersMin
 * worker started by the harness (the platform fixture worker), a job runs on it,
 * /health and the worker's logs show it, and SIGTERM stops the worker and the harness.
 * A malformed --image fails in one line.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { REPO_ROOT, runTs, ChildList } from '../child-process.js';
import { FIXTURE_COMMAND } from '../harness/launcher/launcher-setup.js';
import { fetchOkJson, harnessListening, waitFor } from '../kit/index.js';
import { tempDir } from '../gpu/fake-tools.js';

const CLI = join(REPO_ROOT, 'src/cli/main.ts');
const children = new ChildList();

afterEach(() => children.killAll());

describe('serverless-worker harness --image', () => {
  it('runs the workers of a template with that image, and stops them on SIGTERM', async () => {
    const child = runTs(CLI, ['harness', '--port', '0', '--gpus', 'none', '--image', `test/worker:1=${FIXTURE_COMMAND}`], {
      env: { LOG_LEVEL: 'info' },
      timeout: 180_000,
    });
    children.push(child);
    const { url } = await harnessListening(child, 'auth:');

    // What a deploy client sends: no isServerless, a 22/ssh port.
    const template = await fetchOkJson<{ id: string }>(`${url}/v1/templates`, 'POST', {
      name: 'cli-launcher',
      imageName: 'test/worker:1',
      category: 'CPU',
      ports: ['8000/http', '22/ssh'],
      env: { LOG_LEVEL: 'warn' },
    });
    const endpoint = await fetchOkJson<{ id: string }>(`${url}/v1/endpoints`, 'POST', { templateId: template.id, workersMin: 1, workersMax: 1 });
    const job = await fetchOkJson<{ id: string }>(`${url}/v2/${endpoint.id}/run`, 'POST', { input: { tag: 'via-cli' } });
    const done = await waitFor(
      async () => {
        const status = await fetchOkJson<{ status: string; output?: { workerId?: string; tag?: string } }>(`${url}/v2/${endpoint.id}/status/${job.id}`);
        return status.status === 'COMPLETED' ? status : undefined;
      },
      'the job COMPLETED on a launched worker',
      120_000,
      200,
    );
    expect(done.output?.tag).toBe('via-cli');
    expect(done.output?.workerId).toBe(`${endpoint.id}-1`);
    const health = await fetchOkJson<{ workers: Record<string, number>; healthy: boolean }>(`${url}/v2/${endpoint.id}/health`);
    expect(health).toMatchObject({ healthy: true, workers: { idle: 1, running: 0, throttled: 0 } });
    const record = await fetchOkJson<{ workers: Array<{ id: string; workerState: string; imageName: string }> }>(`${url}/v1/endpoints/${endpoint.id}`);
    expect(record.workers).toEqual([expect.objectContaining({ id: `${endpoint.id}-1`, workerState: 'idle', imageName: 'test/worker:1' })]);
    const logs = await fetchOkJson<{ lines: Array<{ workerId: string; line: string }> }>(`${url}/v2/${endpoint.id}/logs`);
    expect(logs.lines.some((entry) => entry.workerId === `${endpoint.id}-1` && entry.line.includes('"event":"started"'))).toBe(true);

    child.kill('SIGTERM');
    const result = await child;
    expect(result.exitCode, String(result.stderr).slice(-2_000)).toBe(0);
    const stderr = String(result.stderr);
    expect(stderr).toContain('scale up: started worker');
    expect(stderr).toContain('(shutdown)');
    expect(stderr).toContain(`worker ${endpoint.id}-1 exited`);
    expect(stderr).toContain('22/ssh');
  }, 240_000);

  it('--launcher-config FILE: its images run, its settings apply (shutdown deadline, GPUs none)', async () => {
    const config = join(tempDir(), 'launcher.json');
    writeFileSync(config, JSON.stringify({ images: { 'test/from-config:1': FIXTURE_COMMAND }, gpus: 'none', tickMs: 100, shutdownDeadlineMs: 3_210 }));
    const child = runTs(CLI, ['harness', '--port', '0', '--launcher-config', config], { env: { LOG_LEVEL: 'info' }, timeout: 180_000 });
    children.push(child);
    const { url } = await harnessListening(child, 'auth:');
    const template = await fetchOkJson<{ id: string }>(`${url}/v1/templates`, 'POST', {
      name: 'from-config',
      imageName: 'test/from-config:1',
      category: 'CPU',
      env: { LOG_LEVEL: 'warn' },
    });
    const endpoint = await fetchOkJson<{ id: string }>(`${url}/v1/endpoints`, 'POST', { templateId: template.id, workersMin: 0, workersMax: 1 });
    const job = await fetchOkJson<{ id: string }>(`${url}/v2/${endpoint.id}/run`, 'POST', { input: { tag: 'via-config' } });
    const done = await waitFor(
      async () => {
        const status = await fetchOkJson<{ status: string; output?: { workerId?: string; tag?: string } }>(`${url}/v2/${endpoint.id}/status/${job.id}`);
        return status.status === 'COMPLETED' ? status : undefined;
      },
      'the job COMPLETED on a worker started from the config file',
      120_000,
      200,
    );
    expect(done.output?.tag).toBe('via-config');
    child.kill('SIGTERM');
    const result = await child;
    expect(result.exitCode, String(result.stderr).slice(-2_000)).toBe(0);
    const stderr = String(result.stderr);
    expect(stderr).toContain('launcher GPUs: none');
    expect(stderr).toContain('SIGKILL after 3210 ms');
  }, 240_000);

  it('a --launcher-config with an unknown key fails naming the file and the key', async () => {
    const config = join(tempDir(), 'launcher.json');
    writeFileSync(config, JSON.stringify({ images: { 'a/b:1': 'true' }, gpu: '0' }));
    const result = await runTs(CLI, ['harness', '--port', '0', '--launcher-config', config]);
    expect(result.exitCode).not.toBe(0);
    expect(String(result.stderr)).toContain(`launcher config ${config}`);
    expect(String(result.stderr)).toContain('Unrecognized key: "gpu"');
  });

  it('a malformed --image fails in one line naming the expected form', async () => {
    const result = await runTs(CLI, ['harness', '--port', '0', '--image', 'no-command-here']);
    expect(result.exitCode).not.toBe(0);
    expect(String(result.stderr)).toContain('--image expects NAME=COMMAND');
  });
});
