/**
 * `serverless-worker harness --launcher docker` as a real child process on the test
 * kit's engine (--docker-host): a template on the locally built worker image
 * (docker-image.ts) gets a container that completes a job, its output is at
 * `/v2/{id}/logs`, and SIGTERM stops and removes it before the harness exits; a
 * container gets --ping-interval-ms and the silence window, and exits by itself once its
 * harness is SIGKILLed. A
 * --docker-host of another scheme, or one where no engine answers, fails at start
 * saying so.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DockerEngine, LABELS, parseDockerHost } from '../../../packages/platform/src/harness/launcher/docker/index.js';
import { ChildList, REPO_ROOT, runTs } from '../../child-process.js';
import type { TestDockerEngine } from '../../docker/engine/use-docker-engine.js';
import { fetchOkJson, harnessListening, waitFor } from '../../kit/index.js';
import { WORKER_IMAGE, engineWithWorkerImage } from './docker-image.js';

const CLI = join(REPO_ROOT, 'src/cli/main.ts');
const children = new ChildList();
let engine: TestDockerEngine;

beforeAll(async () => {
  engine = await engineWithWorkerImage();
}, 900_000);

afterEach(() => children.killAll());

describe('serverless-worker harness --launcher docker', () => {
  it('runs a template on a local image as containers: a job completes, its logs are served, SIGTERM removes the container', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'sw-launcher-cli-'));
    const child = runTs(CLI, ['harness', '--port', '0', '--gpus', 'none', '--launcher', 'docker', '--docker-host', engine.host, '--data-dir', dataDir], {
      env: { LOG_LEVEL: 'info' },
      timeout: 240_000,
    });
    children.push(child);
    const { url } = await harnessListening(child, 'auth:');
    const template = await fetchOkJson<{ id: string }>(`${url}/v1/templates`, 'POST', {
      name: 'docker-cli',
      imageName: WORKER_IMAGE,
      category: 'CPU',
      env: { LOG_LEVEL: 'warn' },
    });
    const endpoint = await fetchOkJson<{ id: string }>(`${url}/v1/endpoints`, 'POST', {
      templateId: template.id,
      workersMin: 0,
      workersMax: 1,
      idleTimeout: 60,
    });
    const job = await fetchOkJson<{ id: string }>(`${url}/v2/${endpoint.id}/run`, 'POST', { input: { tag: 'in-a-container' } });
    const done = await waitFor(
      async () => {
        const status = await fetchOkJson<{ status: string; output?: { workerId?: string; tag?: string } }>(`${url}/v2/${endpoint.id}/status/${job.id}`);
        return status.status === 'COMPLETED' ? status : undefined;
      },
      'the job COMPLETED in a container',
      180_000,
      200,
    );
    expect(done.output).toEqual({ workerId: `${endpoint.id}-1`, tag: 'in-a-container' });
    // The container's output comes through the engine's log stream, which may lag the job's result by a moment.
    await waitFor(
      async () => {
        const logs = await fetchOkJson<{ lines: Array<{ workerId: string; stream: string; line: string }> }>(`${url}/v2/${endpoint.id}/logs`);
        return logs.lines.some((entry) => entry.workerId === `${endpoint.id}-1` && entry.stream === 'stdout' && entry.line.includes(`"jobId":"${job.id}"`));
      },
      "the job's log line from the container",
      15_000,
      100,
    );
    const record = await fetchOkJson<{ workers: Array<{ id: string; imageName: string }> }>(`${url}/v1/endpoints/${endpoint.id}`);
    expect(record.workers).toEqual([expect.objectContaining({ id: `${endpoint.id}-1`, imageName: WORKER_IMAGE })]);

    const client = new DockerEngine(parseDockerHost(engine.host));
    try {
      const harnessPid = String(child.pid);
      expect(await client.listByLabels([`${LABELS.pid}=${harnessPid}`])).toHaveLength(1);
      child.kill('SIGTERM');
      const result = await child;
      expect(result.exitCode, String(result.stderr).slice(-2_000)).toBe(0);
      const stderr = String(result.stderr);
      expect(stderr).toContain(`docker launcher: engine at ${engine.host}, network volumes under ${join(dataDir, 'volumes')}`);
      expect(stderr).toContain(`scale up: started worker ${endpoint.id}-1`);
      expect(stderr).toContain('(shutdown)');
      expect(stderr).toContain(`worker ${endpoint.id}-1 exited`);
      expect(await client.listByLabels([`${LABELS.pid}=${harnessPid}`])).toEqual([]);
    } finally {
      await client.close();
    }
  }, 300_000);

  it('a container gets --ping-interval-ms and the silence window; after a SIGKILL of its harness it exits by itself within that window', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'sw-launcher-cli-'));
    const child = runTs(
      CLI,
      [
        'harness',
        '--port',
        '0',
        '--gpus',
        'none',
        '--launcher',
        'docker',
        '--docker-host',
        engine.host,
        '--data-dir',
        dataDir,
        '--ping-interval-ms',
        '1000',
        '--missed-pings',
        '3',
      ],
      { env: { LOG_LEVEL: 'info' }, timeout: 240_000 },
    );
    children.push(child);
    const { url } = await harnessListening(child, 'auth:');
    const template = await fetchOkJson<{ id: string }>(`${url}/v1/templates`, 'POST', {
      name: 'docker-cli-orphan',
      imageName: WORKER_IMAGE,
      category: 'CPU',
      env: { LOG_LEVEL: 'info' },
    });
    const endpoint = await fetchOkJson<{ id: string }>(`${url}/v1/endpoints`, 'POST', { templateId: template.id, workersMin: 1, workersMax: 1 });
    const client = new DockerEngine(parseDockerHost(engine.host));
    try {
      const [container] = await waitFor(
        async () => {
          const list = await client.listByLabels([`${LABELS.pid}=${String(child.pid)}`]);
          return list.length > 0 ? list : undefined;
        },
        'the container was created',
        120_000,
        200,
      );
      const id = container?.Id ?? '';
      const inspected = (await client.inspect(id)) as { Config?: { Env?: string[] } };
      expect(inspected.Config?.Env).toEqual(expect.arrayContaining(['RUNPOD_PING_INTERVAL=1000', 'SW_HARNESS_GONE_AFTER_MS=3000']));
      // Joined: the harness has heard from it.
      await waitFor(
        async () => (await fetchOkJson<{ workers: Array<{ id: string }> }>(`${url}/ui/api/overview`)).workers.some((row) => row.id === `${endpoint.id}-1`),
        'the container worker joined',
        120_000,
        200,
      );
      child.kill('SIGKILL');
      await child;
      const killedAt = performance.now();
      await waitFor(async () => (await client.inspect(id)).State.Status === 'exited', 'the orphaned container exited by itself', 60_000, 100);
      console.log(
        `[reliability] docker orphan: container exited ${Math.round(performance.now() - killedAt)} ms after its harness's SIGKILL (silence window 3000 ms)`,
      );
      await client.remove(id);
    } finally {
      await client.close();
    }
  }, 300_000);

  it('a --docker-host of another scheme, or where no engine answers, fails at start naming it', async () => {
    const ssh = await runTs(CLI, ['harness', '--port', '0', '--gpus', 'none', '--launcher', 'docker', '--docker-host', 'ssh://me@box']);
    expect(ssh.exitCode).not.toBe(0);
    expect(String(ssh.stderr)).toContain(
      '--docker-host (or DOCKER_HOST) expects unix:///path/to/docker.sock or tcp://host:port (plain HTTP); got "ssh://me@box"',
    );
    const absent = join(tmpdir(), `no-engine-${process.pid}.sock`);
    const none = await runTs(CLI, ['harness', '--port', '0', '--gpus', 'none', '--launcher', 'docker'], { env: { DOCKER_HOST: `unix://${absent}` } });
    expect(none.exitCode).not.toBe(0);
    expect(String(none.stderr)).toContain(`--launcher docker: cannot reach the Docker engine at unix://${absent}`);
    expect(String(none.stderr)).toContain('point --docker-host (or DOCKER_HOST) at it');
  }, 120_000);
});
