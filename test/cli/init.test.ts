/**
 * `serverless-worker init`: a real CLI process writes the scaffold from
 * templates/scaffold/. What the scaffold does after `npm install` is proved from the packed
 * tarballs: its dry run, dev server, tests, bundle and start, and the --stream scaffold's
 * install, dry run and tests, in test/package/registry-journey.test.ts (installed from a
 * registry, as the README says), its Dockerfile in test/docker/scaffold-image.test.ts.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { packageNameFor } from '../../src/scaffold/write-scaffold.js';
import { REPO_ROOT, runTs } from '../child-process.js';
import { copies, dockerignoreFilter, readDockerfile } from '../docker/dockerfile.js';

const CLI = join(REPO_ROOT, 'src/cli/main.ts');
const scratch = await mkdtemp(join(tmpdir(), 'sw-init-'));
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

const FILES = [
  '.dockerignore',
  '.github/workflows/ci.yml',
  '.gitignore',
  'Dockerfile',
  'README.md',
  'package.json',
  'src/handler.ts',
  'src/worker.ts',
  'test/handler.test.ts',
  'test_input.json',
  'tsconfig.json',
];

interface ScaffoldPackage {
  name: string;
  type: string;
  scripts: Record<string, string>;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  allowScripts: Record<string, boolean>;
}

// Several CLI processes per test: room for a loaded machine.
describe('serverless-worker init', { timeout: 180_000 }, () => {
  it('writes the project: ESM package with the scripts, NodeNext tsconfig, zod input, test, Dockerfile, CI', async () => {
    const dir = join(scratch, 'My Worker');
    const run = await runTs(CLI, ['init', dir]);
    expect(run.exitCode, String(run.stderr)).toBe(0);
    for (const file of FILES) expect(String(run.stdout)).toContain(`  ${file}`);
    const pkg = JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')) as ScaffoldPackage;
    expect(pkg.name).toBe('my-worker');
    expect(pkg.type).toBe('module');
    expect(pkg.dependencies['serverless-worker']).toBe('^0.1.0');
    expect(Object.keys(pkg.dependencies)).toContain('zod');
    expect(Object.keys(pkg.scripts)).toEqual(expect.arrayContaining(['dev', 'dry-run', 'test', 'build']));
    expect(pkg.scripts.build).toBe('serverless-worker build src/worker.ts --outdir dist --splitting');
    // npm 11 runs esbuild's install script (the platform's bundler) only when the project approves it.
    expect(pkg.allowScripts).toEqual({ esbuild: true });
    const tsconfig = JSON.parse(await readFile(join(dir, 'tsconfig.json'), 'utf8')) as { compilerOptions: Record<string, string> };
    expect(tsconfig.compilerOptions).toMatchObject({ module: 'NodeNext', moduleResolution: 'NodeNext' });
    expect(await readFile(join(dir, 'src/handler.ts'), 'utf8')).toContain("from 'zod'");
    expect(await readFile(join(dir, 'test/handler.test.ts'), 'utf8')).toContain("from 'serverless-worker/testing'");
    expect(await readFile(join(dir, 'README.md'), 'utf8')).toMatch(/^# my-worker\n/);
    const ci = await readFile(join(dir, '.github/workflows/ci.yml'), 'utf8');
    expect(ci).toContain('npm test');
    for (const base of ['nvidia/cuda:', 'rocm/', 'node:24']) expect(ci).toContain(base);
  });

  it('types Node as its image runs it, and says how to serve on another port', async () => {
    const dir = join(scratch, 'node-types');
    expect((await runTs(CLI, ['init', dir])).exitCode).toBe(0);
    const pkg = JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')) as ScaffoldPackage;
    const imageNode = /^ARG NODE_IMAGE=node:(\d+)-/m.exec(await readFile(join(dir, 'Dockerfile'), 'utf8'))?.[1];
    expect(imageNode).toBeDefined();
    expect(pkg.devDependencies['@types/node']).toMatch(new RegExp(`^\\^${imageNode}\\.`));
    const readme = await readFile(join(dir, 'README.md'), 'utf8');
    expect(readme).toContain('npm run dev -- --port');
  });

  it('builds a node base with NODE_FROM=base everywhere it says how: README, Dockerfile, CI matrix (no second Node in the CPU image)', async () => {
    const dir = join(scratch, 'node-from');
    expect((await runTs(CLI, ['init', dir])).exitCode).toBe(0);
    const builds = [await readFile(join(dir, 'README.md'), 'utf8'), await readFile(join(dir, 'Dockerfile'), 'utf8')]
      .flatMap((text) => text.split('\n'))
      .filter((line) => line.includes('docker build'));
    const onNode = builds.filter((line) => line.includes('BASE_IMAGE=node:'));
    expect(onNode.length).toBeGreaterThanOrEqual(2);
    for (const line of onNode) expect(line).toContain('--build-arg NODE_FROM=base');
    for (const line of builds.filter((candidate) => !candidate.includes('BASE_IMAGE=node:'))) expect(line).not.toContain('NODE_FROM=base');
    // The CI's image matrix, read as written (an entry a `- kind:` line, its fields below it).
    const ci = await readFile(join(dir, '.github/workflows/ci.yml'), 'utf8');
    const matrix = [...ci.matchAll(/- kind: (\S+)\n\s+base: (\S+)\n\s+node_from: (\S+)/g)].map(([, kind, base, nodeFrom]) => ({ kind, base, nodeFrom }));
    expect(matrix.map((entry) => [entry.kind, entry.nodeFrom])).toEqual([
      ['nvidia', 'copy'],
      ['amd', 'copy'],
      ['cpu', 'base'],
    ]);
    expect(matrix.filter((entry) => entry.base?.startsWith('node:')).every((entry) => entry.nodeFrom === 'base')).toBe(true);
    expect(ci).toMatch(/build-args: \|\n\s+BASE_IMAGE=\$\{\{ matrix\.base \}\}\n\s+NODE_FROM=\$\{\{ matrix\.node_from \}\}/);
  });

  it('writes a Dockerfile that copies only files of the project that its .dockerignore lets in, for three bases', async () => {
    const dir = join(scratch, 'docker');
    expect((await runTs(CLI, ['init', dir])).exitCode).toBe(0);
    const dockerfile = readDockerfile(join(dir, 'Dockerfile'));
    const included = dockerignoreFilter(await readFile(join(dir, '.dockerignore'), 'utf8'));
    for (const stage of dockerfile.stages) {
      for (const copy of copies(stage).filter((c) => c.from === undefined)) {
        for (const source of copy.sources.filter((path) => !path.includes('*'))) {
          expect(FILES, `COPY ${source}`).toContain(source === 'src' ? 'src/worker.ts' : source);
          expect(included(source === 'src' ? 'src/worker.ts' : source), `${source} excluded by .dockerignore`).toBe(true);
        }
      }
    }
    expect(included('node_modules/zod/package.json')).toBe(false);
    // A dependency installed from a tarball in the project reaches npm ci in the build stage.
    expect(included('serverless-worker-0.1.0.tgz')).toBe(true);
    expect(copies(dockerfile.stages.find((stage) => stage.name === 'build')!).some((copy) => copy.sources.includes('*.tgz'))).toBe(true);
    expect(dockerfile.globalArgs.get('BASE_IMAGE')).toMatch(/^nvidia\/cuda:/);
    expect(dockerfile.comments).toContain('BASE_IMAGE=rocm/');
    expect(dockerfile.comments).toContain('BASE_IMAGE=node:24');
  });

  it('writes a Dockerfile that copies Node only onto a base without one, and says what .dockerignore leaves out and how long docker stop must wait', async () => {
    const dir = join(scratch, 'docker-node');
    expect((await runTs(CLI, ['init', dir])).exitCode).toBe(0);
    const dockerfile = readDockerfile(join(dir, 'Dockerfile'));
    const stage = (name: string) => dockerfile.stages.find((candidate) => candidate.name === name);
    // NODE_FROM picks the runtime's parent: the copy of the node image's binary, or the base's own.
    expect(dockerfile.globalArgs.get('NODE_FROM')).toBe('copy');
    expect(stage('runtime')?.from).toBe('node-${NODE_FROM}');
    expect(stage('node-copy')?.from).toBe('runtime-base');
    expect(copies(stage('node-copy')!).filter((copy) => copy.from === 'node')).toHaveLength(1);
    // No COPY of the binary on the base's own path: on a node base that is a second 127 MB layer.
    expect(stage('node-base')?.from).toBe('runtime-base');
    expect(copies(stage('node-base')!)).toEqual([]);
    expect(copies(stage('runtime')!).filter((copy) => copy.from === 'node')).toEqual([]);
    // No BuildKit-only syntax: the legacy builder builds it too.
    expect(readFileSync(join(dir, 'Dockerfile'), 'utf8')).not.toContain('--mount=');
    expect(stage('runtime')?.instructions.find((instruction) => instruction.keyword === 'RUN')?.raw).toContain('needs 22.12 or newer');
    expect(dockerfile.comments).toContain('NODE_FROM=base');
    expect(dockerfile.comments).toContain('assets/');
    expect(dockerfile.comments).toContain('docker stop -t 40');
    expect(dockerfile.comments).toContain('cannot set the stop timeout');
  });

  it('--stream writes an async generator handler and its test', async () => {
    const dir = join(scratch, 'streaming');
    const run = await runTs(CLI, ['init', dir, '--stream', '--name', 'tokens']);
    expect(run.exitCode, String(run.stderr)).toBe(0);
    expect(await readFile(join(dir, 'src/handler.ts'), 'utf8')).toContain('async function* (job, ctx)');
    expect(await readFile(join(dir, 'test/handler.test.ts'), 'utf8')).toContain('streamJob');
    expect((JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')) as ScaffoldPackage).name).toBe('tokens');
  });

  it('refuses to overwrite files with SW_INIT_TARGET_NOT_EMPTY, and overwrites them with --force', async () => {
    const dir = join(scratch, 'existing');
    expect((await runTs(CLI, ['init', dir])).exitCode).toBe(0);
    await writeFile(join(dir, 'src/handler.ts'), '// mine\n');
    const again = await runTs(CLI, ['init', dir]);
    expect(again.exitCode).toBe(1);
    expect(String(again.stderr)).toContain('src/handler.ts');
    expect(String(again.stderr)).toContain('--force');
    expect(await readFile(join(dir, 'src/handler.ts'), 'utf8')).toBe('// mine\n');
    expect((await runTs(CLI, ['init', dir, '--force'])).exitCode).toBe(0);
    expect(await readFile(join(dir, 'src/handler.ts'), 'utf8')).toContain("from 'zod'");
  });

  it('makes a valid npm name from the folder name', () => {
    expect(packageNameFor('My Worker!')).toBe('my-worker');
    expect(packageNameFor('_x')).toBe('x');
    expect(packageNameFor('...')).toBe('my-worker');
  });

  it("pins the scaffold's tools to ranges that this repository's locked versions satisfy", () => {
    const ours = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> };
    const template = JSON.parse(readFileSync(join(REPO_ROOT, 'templates/scaffold/base/package.json'), 'utf8')) as ScaffoldPackage;
    for (const [name, range] of Object.entries({ ...template.dependencies, ...template.devDependencies })) {
      // The two packages of this repository: the scaffold asks for this version of both (test/package/versions.unit.test.ts).
      if (name === 'serverless-worker' || name === 'serverless-worker-platform') continue;
      // The scaffold's `^x.y.z` is this repository's exact pin: the e2e test installs from the same cache.
      // Its typescript is the TypeScript 7 this repository's type checks run (`typescript-7`, an alias of
      // typescript@7); `typescript` here stays 5.9 for typescript-eslint (CONTRIBUTING.md, "Two TypeScripts").
      const pin = name === 'typescript' ? ours.devDependencies['typescript-7']?.replace(/^npm:typescript@/, '') : ours.devDependencies[name];
      expect(range, name).toBe(`^${pin}`);
    }
  });
});
