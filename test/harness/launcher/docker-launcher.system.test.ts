/**
 * The launcher's docker mode on a real Docker engine (the test kit's private dockerd)
 * with a locally built image (docker-image.ts: a bundled fixture worker on the Node 24
 * stand-in base):
 *
 * - a burst of jobs on an endpoint of at most 2 workers runs in containers (never more
 *   than 2, sampled through the engine), each container carrying the worker variables,
 *   host networking and the endpoint's network volume at /runpod-volume (the worker
 *   writes a file there, found in the volume's folder on the host); the output lines
 *   reach `/v2/{id}/logs`; after the idle timeout the containers are removed;
 * - an image the engine lacks makes the endpoint unhealthy with the reason, starts no
 *   container and tries nothing in a loop; once the image is there a worker starts;
 * - a container that exits at once is restarted with backoff and marks the endpoint
 *   unhealthy; one that ignores SIGTERM is killed after the shutdown deadline and removed;
 * - a GPU container's create body holds the NVIDIA device request / AMD devices, as the
 *   engine records them (no GPU here, so such a container is created and inspected, not
 *   started); through the launcher, a GPU worker's start is refused by this engine (no
 *   NVIDIA runtime) and the endpoint's unhealthy reason gives the engine's words;
 * - containers left by a harness that died are removed at the next start, a live one's are kept;
 * - `serverless-worker harness --launcher docker` as a real child process (--docker-host): a
 *   template on the image gets a container that completes a job, its output is at
 *   `/v2/{id}/logs`, and SIGTERM stops and removes it before the harness exits; a container
 *   gets --ping-interval-ms and the silence window, and exits by itself once its harness is
 *   SIGKILLed; a --docker-host of another scheme, or one where no engine answers, fails at
 *   start saying so.
 *
 * One file, so that its tests run one after the other: every harness with a docker launcher
 * removes, at its start, the containers of this host's harnesses that no longer run, and a
 * test here leaves such containers on purpose (a SIGKILLed harness's orphan, waited for until
 * it exits by itself; a dead harness's leftover). These cases were in two files
 * (docker-cli.system.test.ts), which ran at the same time in a run with four workers: a
 * launcher test's start removed the CLI test's orphan before it exited (404 on its inspect).
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  DockerBackend,
  DockerEngine,
  DockerEngineError,
  LABELS,
  containerSpec,
  parseDockerHost,
} from '../../../packages/platform/src/harness/launcher/docker/index.js';
import { ChildList, REPO_ROOT, runTs } from '../../child-process.js';
import type { TestDockerEngine } from '../../docker/engine/use-docker-engine.js';
import { fetchOkJson, harnessListening, waitFor } from '../../kit/index.js';
import { WORKER_IMAGE, engineWithWorkerImage, openBackend } from './docker-image.js';
import { startLauncherHarness, type LauncherHarness } from './launcher-setup.js';

const CLI = join(REPO_ROOT, 'src/cli/main.ts');
const children = new ChildList();
let engine: TestDockerEngine;
let dataDir: string;
let running: LauncherHarness | undefined;
const backends: DockerBackend[] = [];

beforeAll(async () => {
  engine = await engineWithWorkerImage();
  dataDir = await mkdtemp(join(tmpdir(), 'sw-launcher-data-'));
}, 900_000);

afterEach(async () => {
  await running?.close();
  running = undefined;
});

afterAll(async () => {
  for (const backend of backends) await backend.close();
});

async function harnessOnDocker(options: Parameters<typeof startLauncherHarness>[0] = {}): Promise<{ h: LauncherHarness; backend: DockerBackend }> {
  const backend = await openBackend(engine, dataDir);
  backends.push(backend);
  const h = await startLauncherHarness(options, undefined, backend);
  running = h;
  return { h, backend };
}

describe('harness launcher, docker mode', () => {
  it('runs a burst in at most workersMax containers with the worker variables and the network volume, logs their output, removes them after the idle timeout', async () => {
    const { h, backend } = await harnessOnDocker();
    const volume = await h.json<{ id: string }>('POST', '/v1/networkvolumes', { name: 'models', size: 10, dataCenterId: 'EU-RO-1' });
    const endpoint = await h.createEndpoint(
      { workersMin: 0, workersMax: 2, idleTimeout: 1, scalerType: 'REQUEST_COUNT', scalerValue: 1, networkVolumeId: volume.id },
      {
        imageName: WORKER_IMAGE,
        dockerStartCmd: ['sh', '-c', 'echo "from $RUNPOD_POD_ID" > "/runpod-volume/$RUNPOD_POD_ID.txt" && exec node dist/platform-worker.js'],
      },
    );
    const ours = () => backend.engine.listByLabels([`${LABELS.run}=${backend.runId}`]);
    let most = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        most = Math.max(most, (await ours()).length);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();

    const jobIds: string[] = [];
    for (let i = 0; i < 6; i++) jobIds.push(await h.run(endpoint.id, { mode: 'sleep', ms: 1_500, tag: i }));
    // Listed, then inspected: on a busy machine the listed container may be gone by then
    // (its jobs done, its idle timeout passed), so the two go together and a 404 looks again.
    const inspectOne = async () => {
      const [listed] = await ours();
      if (listed === undefined) return undefined;
      try {
        return await backend.engine.inspect(listed.Id);
      } catch (error) {
        if (error instanceof DockerEngineError && error.status === 404) return undefined;
        throw error;
      }
    };
    const inspected = (await waitFor(inspectOne, 'a container of the endpoint, inspected', 120_000, 100)) as unknown as {
      Config: { Env: string[]; Labels: Record<string, string>; Image: string };
      HostConfig: { NetworkMode: string; Binds: string[] };
    };
    expect(inspected.Config.Image).toBe(WORKER_IMAGE);
    expect(inspected.HostConfig.NetworkMode).toBe('host');
    expect(inspected.HostConfig.Binds).toEqual([`${join(dataDir, 'volumes', volume.id)}:/runpod-volume`]);
    const workerId = inspected.Config.Labels[LABELS.worker] ?? '';
    expect(workerId).toMatch(new RegExp(`^${endpoint.id}-\\d+$`));
    expect(inspected.Config.Labels).toMatchObject({ [LABELS.harness]: 'launcher', [LABELS.endpoint]: endpoint.id, [LABELS.pid]: String(process.pid) });
    expect(inspected.Config.Env).toEqual(
      expect.arrayContaining([
        'LOG_LEVEL=warn',
        `RUNPOD_POD_ID=${workerId}`,
        `RUNPOD_ENDPOINT_ID=${endpoint.id}`,
        `RUNPOD_WEBHOOK_GET_JOB=${h.server.url}/v2/${endpoint.id}/job-take/$ID?`,
        'RUNPOD_GPU_COUNT=0',
      ]),
    );
    // Only the worker's variables and the image's own: none of the harness's environment (vitest's VITEST=true, say).
    expect(process.env.VITEST).toBeDefined();
    expect(inspected.Config.Env.filter((entry) => entry.startsWith('VITEST'))).toEqual([]);

    const outputs = await waitFor(
      async () => {
        const statuses = await Promise.all(jobIds.map((id) => h.status(endpoint.id, id)));
        return statuses.every((status) => status.status === 'COMPLETED') ? statuses.map((status) => status.output as { workerId: string }) : undefined;
      },
      'the 6 jobs COMPLETED in containers',
      180_000,
      200,
    );
    const workers = new Set(outputs.map((output) => output.workerId));
    expect(workers.size).toBeGreaterThanOrEqual(1);
    expect(workers.size).toBeLessThanOrEqual(2);
    for (const id of workers) expect(readFileSync(join(dataDir, 'volumes', volume.id, `${id}.txt`), 'utf8')).toBe(`from ${id}\n`);

    // Idle for idleTimeout (1 s): the containers go, and are removed from the engine.
    await waitFor(async () => (await ours()).length === 0, 'the containers removed after the idle timeout', 60_000, 200);
    sampling = false;
    await sampler;
    expect(most).toBe(2);
    expect((await h.health(endpoint.id)).workers).toMatchObject({ initializing: 0, idle: 0, running: 0 });

    const logs = await h.logs(endpoint.id);
    for (const id of workers) {
      expect(logs.some((entry) => entry.workerId === id && entry.stream === 'stdout' && entry.line.includes('"event":"started"'))).toBe(true);
      expect(
        logs.some((entry) => entry.workerId === id && entry.stream === 'launcher' && entry.line.startsWith(`started (container serverless-worker-${id}-`)),
      ).toBe(true);
      expect(logs.some((entry) => entry.workerId === id && entry.stream === 'launcher' && entry.line.startsWith('exited (code'))).toBe(true);
    }
    const downs = h.launcher.scaleEvents(endpoint.id).filter((event) => event.kind === 'scale-down');
    expect(downs.length).toBeGreaterThanOrEqual(workers.size);
    expect(downs.every((event) => event.message.includes('SIGTERM (idle)'))).toBe(true);
    // Each ended on SIGTERM (the worker's graceful shutdown), within the deadline: none killed.
    const exits = h.launcher.scaleEvents(endpoint.id).filter((event) => event.kind === 'exit');
    expect(exits.length).toBe(downs.length);
    expect(exits.filter((event) => event.message.includes('SIGKILL'))).toEqual([]);
  }, 300_000);

  it('an image the engine lacks: unhealthy with the reason, no container, no start loop; the worker starts once the image is there', async () => {
    const { h, backend } = await harnessOnDocker();
    const missing = `sw-test/not-built-${process.pid}:1`;
    const endpoint = await h.createEndpoint({ workersMin: 1, workersMax: 1 }, { imageName: missing });
    const health = await waitFor(
      async () => {
        const now = await h.health(endpoint.id);
        return now.healthy === false ? now : undefined;
      },
      'the endpoint unhealthy',
      60_000,
      100,
    );
    expect(health.unhealthyReason).toBe(
      `image "${missing}" is not on the Docker engine at ${engine.host}: build it there (docker build -t ${missing} .) or pull it; the harness does not pull images`,
    );
    // Ten more scaling rounds: the reason was said once, nothing was started or logged again.
    const linesBefore = h.logLines.length;
    const roundsBefore = h.launcher.rounds;
    await waitFor(() => h.launcher.rounds > roundsBefore && (h.launcher.sleeping || h.launcher.rounds >= roundsBefore + 10), 'ten more scaling rounds', 60_000);
    expect(h.launcher.scaleEvents(endpoint.id).map((event) => event.kind)).toEqual(['unhealthy']);
    expect(await backend.engine.listByLabels([`${LABELS.endpoint}=${endpoint.id}`])).toEqual([]);
    expect(h.logLines.slice(linesBefore).filter((line) => line.endpointId === endpoint.id)).toEqual([]);

    await engine.docker(['tag', WORKER_IMAGE, missing]);
    await waitFor(
      async () => {
        const now = await h.health(endpoint.id);
        return now.healthy === true && now.workers.idle === 1;
      },
      'a worker of the now present image idle, the endpoint healthy',
      120_000,
      100,
    );
    await engine.docker(['rmi', missing]);
  }, 300_000);

  it('a container that exits at once: backoff, then unhealthy; one that ignores SIGTERM: SIGKILL after the deadline, removed', async () => {
    const { h, backend } = await harnessOnDocker({ shutdownDeadlineMs: 1_500, backoff: { baseMs: 200, maxMs: 1_000, unhealthyAfter: 2 } });
    const crashing = await h.createEndpoint(
      { workersMin: 1, workersMax: 1 },
      { imageName: WORKER_IMAGE, dockerStartCmd: ['sh', '-c', 'echo boom >&2; exit 3'] },
    );
    const health = await waitFor(
      async () => {
        const now = await h.health(crashing.id);
        return now.healthy === false ? now : undefined;
      },
      'the crashing endpoint unhealthy',
      120_000,
      100,
    );
    expect(health.unhealthyReason).toContain('exited during start-up 2 times in a row (last: code 3, signal null)');
    const crashLogs = await h.logs(crashing.id);
    expect(crashLogs.some((entry) => entry.stream === 'stderr' && entry.line === 'boom')).toBe(true);
    expect(
      h.launcher
        .scaleEvents(crashing.id)
        .filter((event) => event.kind === 'crash')
        .map((event) => event.nextStartInMs)
        .slice(0, 2),
    ).toEqual([200, 400]);

    // sleep as the container's PID 1 has no SIGTERM handler: the kernel drops the signal.
    const stuck = await h.createEndpoint(
      { workersMin: 1, workersMax: 1 },
      { imageName: WORKER_IMAGE, dockerStartCmd: ['sh', '-c', 'echo up; exec sleep 300'] },
    );
    await waitFor(async () => (await h.logs(stuck.id)).some((entry) => entry.line === 'up'), 'the stuck container up', 120_000, 100);
    await h.close();
    running = undefined;
    const exit = h.logLines.find((line) => line.endpointId === stuck.id && String(line.msg).includes('exited'));
    expect(exit?.msg).toMatch(/exited \(code 137, signal null\) after SIGKILL: it outlived the shutdown deadline/);
    expect(await backend.engine.listByLabels([`${LABELS.run}=${backend.runId}`])).toEqual([]);
  }, 300_000);

  it('GPU containers: the create body the engine records holds the NVIDIA device request, or the AMD devices and groups', async () => {
    const backend = await openBackend(engine, dataDir);
    backends.push(backend);
    const common = {
      image: WORKER_IMAGE,
      entrypoint: [],
      cmd: [],
      env: { CUDA_VISIBLE_DEVICES: '1,2' },
      ports: [],
      labels: { [LABELS.run]: backend.runId },
      stopTimeoutSeconds: 10,
    };
    const nvidia = await backend.engine.createContainer(
      `sw-test-gpu-nvidia-${process.pid}`,
      containerSpec({ ...common, gpus: ['1', '2'], vendor: 'nvidia', gpuGroups: [] }),
    );
    const amd = await backend.engine.createContainer(
      `sw-test-gpu-amd-${process.pid}`,
      containerSpec({ ...common, gpus: ['1'], vendor: 'amd', gpuGroups: ['44', '105'] }),
    );
    try {
      const n = (await backend.engine.inspect(nvidia)) as unknown as { HostConfig: { DeviceRequests: unknown[] }; Config: { Env: string[] } };
      expect(n.HostConfig.DeviceRequests).toEqual([{ Driver: '', Count: 0, DeviceIDs: ['1', '2'], Capabilities: [['gpu']], Options: null }]);
      expect(n.Config.Env.some((entry) => entry.startsWith('CUDA_VISIBLE_DEVICES='))).toBe(false);
      const a = (await backend.engine.inspect(amd)) as unknown as { HostConfig: { Devices: unknown[]; GroupAdd: string[]; DeviceRequests: unknown } };
      expect(a.HostConfig.Devices).toEqual([
        { PathOnHost: '/dev/kfd', PathInContainer: '/dev/kfd', CgroupPermissions: 'rwm' },
        { PathOnHost: '/dev/dri', PathInContainer: '/dev/dri', CgroupPermissions: 'rwm' },
      ]);
      expect(a.HostConfig.GroupAdd).toEqual(['44', '105']);
      expect(a.HostConfig.DeviceRequests).toBeNull();
    } finally {
      await backend.engine.remove(nvidia);
      await backend.engine.remove(amd);
    }
  }, 120_000);

  it('a GPU endpoint on an engine without the NVIDIA runtime: the device request reaches the engine, which refuses it; the endpoint says why', async () => {
    const { h } = await harnessOnDocker({ gpus: { vendor: 'nvidia', devices: ['0', '1'] }, backoff: { baseMs: 200, maxMs: 1_000, unhealthyAfter: 2 } });
    const endpoint = await h.createEndpoint({ computeType: 'GPU', gpuCount: 1, workersMin: 1, workersMax: 1 }, { imageName: WORKER_IMAGE, category: 'NVIDIA' });
    const health = await waitFor(
      async () => {
        const now = await h.health(endpoint.id);
        return now.healthy === false ? now : undefined;
      },
      'the GPU endpoint unhealthy',
      120_000,
      100,
    );
    // The engine's own words for a GPU device request it has no driver for.
    expect(health.unhealthyReason).toMatch(/last: could not start the container: .*could not select device driver "" with capabilities: \[\[gpu\]\]/);
    // The GPU went back to the pool at each failed start: the next worker got device 0 again.
    const started = h.launcher.scaleEvents(endpoint.id).filter((event) => event.kind === 'scale-up');
    expect(started.length).toBeGreaterThanOrEqual(2);
    expect(started.every((event) => event.message.endsWith(', GPUs 0'))).toBe(true);
  }, 180_000);

  it("removes the containers of a harness that died at its next start, and keeps a live harness's", async () => {
    const dead = spawn(process.execPath, ['-e', '0']);
    const deadPid = await new Promise<number>((resolve) => dead.once('exit', () => resolve(dead.pid ?? 0)));
    const labels = (pid: number) => ({ [LABELS.harness]: 'launcher', [LABELS.host]: hostname(), [LABELS.pid]: String(pid) });
    const probe = await openBackend(engine, dataDir);
    backends.push(probe);
    const left = await probe.engine.createContainer(`sw-test-leftover-${process.pid}`, { Image: WORKER_IMAGE, Labels: labels(deadPid) });
    const live = await probe.engine.createContainer(`sw-test-live-${process.pid}`, { Image: WORKER_IMAGE, Labels: labels(process.pid) });
    try {
      const backend = await openBackend(engine, dataDir);
      backends.push(backend);
      await expect(backend.engine.inspect(left)).rejects.toSatisfy((error) => error instanceof DockerEngineError && error.status === 404);
      expect((await backend.engine.inspect(live)).Id).toBe(live);
    } finally {
      await probe.engine.remove(live);
    }
    expect(existsSync(dataDir)).toBe(true);
  }, 120_000);
});

describe('serverless-worker harness --launcher docker (the CLI as a child process)', () => {
  afterEach(() => children.killAll());

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
