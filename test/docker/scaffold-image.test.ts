/**
 * The scaffold's Dockerfile, built by a real Docker engine (test/docker/engine/) as a
 * worker author builds it: this package packed (`npm pack`), a project written by
 * `serverless-worker init`, the tarball put in the project and installed from there
 * (package.json: `file:serverless-worker-<version>.tgz`, recorded in package-lock.json),
 * then `docker build` with each of the three BASE_IMAGE choices on stand-ins (CUDA runtime,
 * ROCm, node:24-bookworm-slim). The build stage's `npm ci` must find the tarball (the
 * Dockerfile copies *.tgz beside package.json). Each image then runs for real: its dry
 * run, `--serve-api`, and a platform worker joined to a harness with the metrics port on.
 */
import { copyFile, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChildList, REPO_ROOT, runTs } from '../child-process.js';
import { call, freePort } from '../kit/index.js';
import { checkServeApi, ContainerList, envArgs, finalRecord, runOnce, startHarness, untilAnswers, type Harness } from './containers.js';
import { packThisPackage } from '../package/pack-this-package.js';
import { standInBase, useDockerEngine, type TestDockerEngine } from './engine/use-docker-engine.js';

const BASES = ['nvidia', 'amd', 'cpu'] as const;
type Base = (typeof BASES)[number];

let engine: TestDockerEngine;
let containers: ContainerList;
let harness: Harness;
let project: string;
let tarball: string;
let platformTarball: string;
const children = new ChildList();
const scratch = await mkdtemp(join(tmpdir(), 'sw-scaffold-image-'));
const tags: Partial<Record<Base, string>> = {};

/** npm without the settings of the npm run or vitest around this test. */
function npmEnv(): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = {};
  for (const name of Object.keys(process.env)) if (/^npm_/i.test(name) || name === 'NODE_OPTIONS') env[name] = undefined;
  return { ...env, npm_config_prefer_offline: 'true', npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' };
}

beforeAll(async () => {
  engine = await useDockerEngine();
  containers = new ContainerList(engine);
  const pack = join(scratch, 'pack');
  // Built and packed once per run for every file that installs the tarballs (pack-this-package.ts).
  const packed = await packThisPackage(pack);
  tarball = basename(packed.tarball);
  platformTarball = basename(packed.platformTarball);
  expect(tarball).toMatch(/^serverless-worker-\d.*\.tgz$/);
  project = join(scratch, 'my-worker');
  const init = await runTs(join(REPO_ROOT, 'src/cli/main.ts'), ['init', project]);
  expect(init.exitCode, String(init.stderr)).toBe(0);
  // The tarball goes in the project: `npm install ./x.tgz` records file:x.tgz, which the
  // Dockerfile's COPY of *.tgz brings to npm ci. Only the lockfile is needed here.
  await copyFile(join(pack, tarball), join(project, tarball));
  await copyFile(join(pack, platformTarball), join(project, platformTarball));
  await execa('npm', ['install', '--package-lock-only', `./${tarball}`, `./${platformTarball}`], { cwd: project, env: npmEnv(), timeout: 300_000 });
  const node = await standInBase('node', 24);
  const bases: Record<Base, string> = { nvidia: await standInBase('cuda'), amd: await standInBase('rocm'), cpu: node };
  // One after the other: the build stage (npm ci, npm run build) is built once, then cached.
  for (const base of BASES) {
    tags[base] = await engine.build(join(project, 'Dockerfile'), project, {
      tag: `sw-test/scaffold:${base}`,
      args: { BASE_IMAGE: bases[base], NODE_IMAGE: node },
    });
  }
  harness = await startHarness(children, BASES);
}, 900_000);

afterAll(async () => {
  await containers?.removeAll();
  await children.killAll();
  await rm(scratch, { recursive: true, force: true });
});

describe('a project scaffolded by init and installed from the packed tarball', () => {
  it('depends on the tarball in its folder, recorded in the lockfile that npm ci reads', async () => {
    const manifest = JSON.parse(await readFile(join(project, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    expect(manifest.dependencies['serverless-worker']).toBe(`file:${tarball}`);
    const lock = JSON.parse(await readFile(join(project, 'package-lock.json'), 'utf8')) as { packages: Record<string, { resolved?: string }> };
    expect(lock.packages['node_modules/serverless-worker']?.resolved).toBe(`file:${tarball}`);
  });
});

describe.each(BASES)('the scaffold image on the %s base', (base) => {
  it('dry run of test_input.json: exit 0, the final record; the unprivileged worker user; tini as PID 1', async () => {
    const run = await runOnce(engine, [tags[base] as string]);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(finalRecord(run.stdout)).toMatchObject({ status: 'COMPLETED', output: { text: 'hello hello' } });
    const who = await runOnce(engine, ['--entrypoint', 'sh', tags[base] as string, '-c', 'id -un; id -Gn; node -p process.versions.node']);
    const [user, groups, node] = who.stdout.trim().split('\n');
    expect(user).toBe('worker');
    // The ROCm base's render and video groups, for /dev/kfd and /dev/dri.
    if (base === 'amd') expect(groups?.split(' ').sort()).toEqual(['render', 'video', 'worker']);
    expect(node).toMatch(/^24\./);
    const { stdout } = await engine.docker(['image', 'inspect', '-f', '{{json .Config.Entrypoint}}', tags[base] as string]);
    expect(JSON.parse(String(stdout))[0]).toBe('/usr/bin/tini');
  });

  it('--serve-api answers /runsync, /ui and /docs', { timeout: 120_000 }, async () => {
    expect(await checkServeApi(containers, tags[base] as string, { prompt: 'served', times: 1 })).toMatchObject({
      status: 'COMPLETED',
      output: { text: 'served' },
    });
  });

  it('as a platform worker joined to a harness: /metrics answers and a job completes; docker stop exits 0', { timeout: 120_000 }, async () => {
    const metricsPort = await freePort();
    const id = await containers.start([
      ...envArgs({
        ...harness.workerEnv(base),
        RUNPOD_POD_ID: `scaffold-${base}`,
        SERVERLESS_WORKER_METRICS_PORT: String(metricsPort),
        SERVERLESS_WORKER_METRICS_HOST: '127.0.0.1',
      }),
      tags[base] as string,
    ]);
    await untilAnswers(engine, id, `http://127.0.0.1:${metricsPort}/metrics`);
    const answer = await call('POST', `${harness.url}/v2/${base}/runsync`, { body: { input: { prompt: base, times: 2 } } });
    expect(answer.json).toMatchObject({ status: 'COMPLETED', output: { text: `${base} ${base}` } });
    expect((await call('GET', `http://127.0.0.1:${metricsPort}/metrics`)).text).toMatch(/^# HELP /m);
    await engine.docker(['stop', '-t', '20', id]);
    const { stdout } = await engine.docker(['inspect', '-f', '{{.State.ExitCode}}', id]);
    expect(String(stdout).trim()).toBe('0');
  });
});
