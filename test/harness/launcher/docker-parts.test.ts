/**
 * The docker launcher's pure parts, no engine needed: the container create body the
 * launcher sends (env, entrypoint and command, host network, the network volume bind,
 * NVIDIA device requests, AMD devices and groups, labels, stop timeout), the
 * demultiplexing of a container's output into stdout and stderr lines, the
 * --docker-host parser, the host's video/render group ids, and an imageName that is no
 * image reference (refused before the engine is asked).
 */
import { describe, expect, it } from 'vitest';
import pino from 'pino';
import {
  DockerBackend,
  LogFrames,
  containerSpec,
  gpuGroups,
  parseDockerHost,
  type ContainerSpecInput,
} from '../../../packages/platform/src/harness/launcher/docker/index.js';
import type { Template } from '../../../packages/platform/src/harness/management/index.js';

const base: ContainerSpecInput = {
  image: 'me/worker:1',
  entrypoint: [],
  cmd: [],
  env: { MODEL: 'tiny', RUNPOD_POD_ID: 'ep-1', CUDA_VISIBLE_DEVICES: '2,3' },
  ports: ['8000/http', '22/ssh', '53/udp'],
  labels: { 'serverless-worker.harness': 'launcher' },
  gpus: [],
  vendor: undefined,
  gpuGroups: [],
  stopTimeoutSeconds: 10,
};

describe('containerSpec', () => {
  it("keeps the image's entrypoint and command when the template leaves them empty; host network; env as NAME=value", () => {
    const spec = containerSpec(base);
    expect(spec).not.toHaveProperty('Entrypoint');
    expect(spec).not.toHaveProperty('Cmd');
    expect(spec).toMatchObject({
      Image: 'me/worker:1',
      Env: ['MODEL=tiny', 'RUNPOD_POD_ID=ep-1', 'CUDA_VISIBLE_DEVICES=2,3'],
      Labels: { 'serverless-worker.harness': 'launcher' },
      ExposedPorts: { '8000/tcp': {}, '22/tcp': {}, '53/udp': {} },
      StopTimeout: 10,
      HostConfig: { NetworkMode: 'host' },
    });
    expect(spec.HostConfig).toEqual({ NetworkMode: 'host' });
  });

  it('dockerEntrypoint and dockerStartCmd override; a network volume is bound at /runpod-volume', () => {
    const spec = containerSpec({ ...base, entrypoint: ['/bin/sh', '-c'], cmd: ['node dist/worker.js'], volumePath: '/data/volumes/vol1' });
    expect(spec).toMatchObject({
      Entrypoint: ['/bin/sh', '-c'],
      Cmd: ['node dist/worker.js'],
      HostConfig: { NetworkMode: 'host', Binds: ['/data/volumes/vol1:/runpod-volume'] },
    });
  });

  it('NVIDIA: a device request for exactly its GPUs (--gpus device=2,3), and no host indexes in CUDA_VISIBLE_DEVICES', () => {
    const spec = containerSpec({ ...base, gpus: ['2', '3'], vendor: 'nvidia' });
    expect(spec.HostConfig).toEqual({ NetworkMode: 'host', DeviceRequests: [{ Driver: '', Count: 0, DeviceIDs: ['2', '3'], Capabilities: [['gpu']] }] });
    expect((spec.Env as string[]).some((entry) => entry.startsWith('CUDA_VISIBLE_DEVICES='))).toBe(false);
  });

  it('AMD: /dev/kfd and /dev/dri with the video and render groups; HIP_VISIBLE_DEVICES (host indexes) stays', () => {
    const spec = containerSpec({ ...base, env: { HIP_VISIBLE_DEVICES: '1' }, gpus: ['1'], vendor: 'amd', gpuGroups: ['44', '110'] });
    expect(spec.HostConfig).toEqual({
      NetworkMode: 'host',
      Devices: [
        { PathOnHost: '/dev/kfd', PathInContainer: '/dev/kfd', CgroupPermissions: 'rwm' },
        { PathOnHost: '/dev/dri', PathInContainer: '/dev/dri', CgroupPermissions: 'rwm' },
      ],
      GroupAdd: ['44', '110'],
    });
    expect(spec.Env).toEqual(['HIP_VISIBLE_DEVICES=1']);
  });

  it('a worker without GPUs on a GPU machine gets no device and keeps the empty visible-devices variable', () => {
    const spec = containerSpec({ ...base, env: { CUDA_VISIBLE_DEVICES: '' }, gpus: [], vendor: 'nvidia' });
    expect(spec.HostConfig).toEqual({ NetworkMode: 'host' });
    expect(spec.Env).toEqual(['CUDA_VISIBLE_DEVICES=']);
  });
});

/** One frame of the engine's multiplexed stream. */
function frame(stream: 1 | 2, text: string): Buffer {
  const payload = Buffer.from(text, 'utf8');
  const header = Buffer.alloc(8);
  header[0] = stream;
  header.writeUInt32BE(payload.length, 4);
  return Buffer.concat([header, payload]);
}

describe('LogFrames', () => {
  it('splits frames into stdout and stderr lines, across frame and chunk boundaries, and gives the unfinished last lines at the end', () => {
    const lines: string[] = [];
    const frames = new LogFrames((stream, line) => lines.push(`${stream}: ${line}`));
    const all = Buffer.concat([frame(1, 'one\ntw'), frame(2, 'err 1\r\n'), frame(1, 'o\nthr'), frame(2, 'ünï'), frame(1, 'ee')]);
    // Fed in pieces of 5 bytes: headers and a two-byte character are cut in the middle.
    for (let at = 0; at < all.length; at += 5) frames.push(all.subarray(at, at + 5));
    expect(lines).toEqual(['stdout: one', 'stderr: err 1', 'stdout: two']);
    frames.end();
    expect(lines).toEqual(['stdout: one', 'stderr: err 1', 'stdout: two', 'stdout: three', 'stderr: ünï']);
  });
});

describe('parseDockerHost', () => {
  it('unix sockets (with or without the scheme) and tcp://host:port; others refused naming what is accepted', () => {
    expect(parseDockerHost()).toEqual({ kind: 'unix', socketPath: '/var/run/docker.sock', display: 'unix:///var/run/docker.sock' });
    expect(parseDockerHost('unix:///tmp/d.sock')).toMatchObject({ kind: 'unix', socketPath: '/tmp/d.sock' });
    expect(parseDockerHost('/tmp/d.sock')).toMatchObject({ kind: 'unix', socketPath: '/tmp/d.sock', display: 'unix:///tmp/d.sock' });
    expect(parseDockerHost('tcp://127.0.0.1:2375')).toMatchObject({ kind: 'tcp', origin: 'http://127.0.0.1:2375' });
    expect(() => parseDockerHost('ssh://me@box')).toThrow('expects unix:///path/to/docker.sock or tcp://host:port');
    expect(() => parseDockerHost('tcp://box')).toThrow('got "tcp://box"');
  });
});

describe('gpuGroups', () => {
  it("the host's video and render group ids, video by name when the host has neither", () => {
    expect(gpuGroups('root:x:0:\nvideo:x:44:\nsudo:x:27:\nrender:x:105:me\n')).toEqual(['44', '105']);
    expect(gpuGroups('video:x:44:\n')).toEqual(['44']);
    expect(gpuGroups('root:x:0:\n')).toEqual(['video']);
  });
});

describe('DockerBackend.startProblem', () => {
  it('an imageName that is no Docker image reference is the reason, without asking the engine (none listens here)', async () => {
    const backend = new DockerBackend({
      host: parseDockerHost('unix:///nonexistent/docker.sock'),
      dataDir: '/nonexistent',
      machineId: 'm',
      logger: pino({ level: 'silent' }),
    });
    try {
      expect(await backend.startProblem({ imageName: 'My/Worker:1' } as Template)).toBe(
        'imageName "My/Worker:1" is not a Docker image reference (like "me/worker:1" or "ghcr.io/org/worker:1.0")',
      );
      await expect(backend.startProblem({ imageName: 'me/worker:1' } as Template)).rejects.toThrow(
        'cannot reach the Docker engine at unix:///nonexistent/docker.sock',
      );
    } finally {
      await backend.close();
    }
  });
});
