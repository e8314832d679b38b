/**
 * The test kit's engine and stand-in bases (test/docker/engine/): the private dockerd
 * answers on its socket, runs containers on the host network, and each stand-in holds
 * what the Dockerfiles expect of the base it stands for.
 */
import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { standInBase, useDockerEngine } from './engine/use-docker-engine.js';

describe('the test Docker engine', () => {
  it('answers the Engine API on its own socket, with overlay2 storage', async () => {
    const engine = await useDockerEngine();
    expect(engine.host).toBe(`unix://${engine.socketPath}`);
    const info = await new Promise<{ Driver: string }>((resolve, reject) => {
      request({ socketPath: engine.socketPath, path: '/info' }, (res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk.toString()));
        res.on('end', () => resolve(JSON.parse(body) as { Driver: string }));
      })
        .on('error', reject)
        .end();
    });
    expect(info.Driver).toBe('overlay2');
  });

  it('node stand-in: Node 24 and npm at /usr/local/bin, a node user uid 1000, the CA bundle for npm', { timeout: 300_000 }, async () => {
    const engine = await useDockerEngine();
    const tag = await standInBase('node', 24);
    const { stdout } = await engine.docker([
      'run',
      '--rm',
      '--network',
      'host',
      tag,
      'sh',
      '-c',
      'node -p process.versions.node; npm --version; id -u node; command -v node; echo "$NODE_EXTRA_CA_CERTS"',
    ]);
    const [node, npm, uid, path, ca] = String(stdout).trim().split('\n');
    expect(node).toMatch(/^24\./);
    expect(npm).toMatch(/^\d+\.\d+\.\d+$/);
    expect(uid).toBe('1000');
    expect(path).toBe('/usr/local/bin/node');
    expect(ca).toBe('/etc/ssl/certs/ca-certificates.crt');
  });

  it('cuda and rocm stand-ins: no Node of their own, root, useradd; rocm has the render and video groups', { timeout: 300_000 }, async () => {
    const engine = await useDockerEngine();
    for (const kind of ['cuda', 'rocm'] as const) {
      const tag = await standInBase(kind);
      const { stdout } = await engine.docker([
        'run',
        '--rm',
        tag,
        'sh',
        '-c',
        'command -v node || echo no-node; id -u; command -v useradd; getent group video render | cut -d: -f1 | tr "\\n" " "',
      ]);
      const [node, uid, useradd, groups] = String(stdout).trim().split('\n');
      expect(node).toBe('no-node');
      expect(uid).toBe('0');
      expect(useradd).toBe('/usr/sbin/useradd');
      if (kind === 'rocm') expect(groups?.trim()).toBe('video render');
      else expect(groups?.trim()).toBe('video');
    }
  });
});
