/**
 * The structure of Dockerfile.gpu and Dockerfile.cpu, read (stages, COPY sources in the
 * build context, COPY --from an earlier stage, the entrypoint is the bundle the build
 * stage writes under tini, a non-root user, no node_modules or npm in the final stage):
 * quick checks that name the rule a change breaks. test/docker/images.test.ts builds
 * both with a real Docker engine and runs them.
 */
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { copies, dockerignoreFilter, parseDockerfile, runs, stageArg, workdir, type Stage } from './docker/dockerfile.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const read = (path: string) => readFileSync(`${ROOT}${path}`, 'utf8');

function filesUnder(path: string): string[] {
  const full = `${ROOT}${path}`;
  if (!statSync(full).isDirectory()) return [path];
  return readdirSync(full, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && !entry.parentPath.includes('node_modules'))
    .map((entry) => posix.join(path, posix.relative(full, posix.join(entry.parentPath, entry.name))));
}

/** The devDependencies of the package.json in `folder` ('' for the root). */
const pkg = (folder: string) => (JSON.parse(read(`${folder}package.json`)) as { devDependencies?: Record<string, string> }).devDependencies ?? {};

const DOCKERFILES = ['Dockerfile.gpu', 'Dockerfile.cpu'] as const;
const included = dockerignoreFilter(read('.dockerignore'));

describe.each(DOCKERFILES)('%s', (file) => {
  const dockerfile = parseDockerfile(read(file));
  const stages = dockerfile.stages;
  const final = stages.at(-1) as Stage;
  const build = stages.find((stage) => stage.name === 'build') as Stage;

  it('names every stage, uniquely; has a build stage and ends with the runtime stage', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    for (const stage of stages) expect(stage.name, `FROM ${stage.base}`).toMatch(/^[a-z][a-z0-9-]*$/);
    expect(new Set(stages.map((stage) => stage.name)).size).toBe(stages.length);
    expect(build).toBeDefined();
    expect(final.name).toBe('runtime');
  });

  it('builds with Node 24: npm ci, then serverless-worker build of the WORKER folder (the bundle recipe)', () => {
    expect(build.base).toMatch(/^node:24[.-]/);
    const script = runs(build).join('\n');
    expect(script).toMatch(/\bnpm ci\b/);
    const raw = build.instructions
      .filter((i) => i.keyword === 'RUN')
      .map((i) => i.raw)
      .join('\n');
    expect(raw).toContain('node bin/serverless-worker.js build "${WORKER}/worker.ts"');
    const defaultWorker = stageArg(build, 'WORKER') ?? '';
    expect(existsSync(`${ROOT}${defaultWorker}/worker.ts`), `${defaultWorker}/worker.ts`).toBe(true);
    expect(existsSync(`${ROOT}${defaultWorker}/test_input.json`), `${defaultWorker}/test_input.json`).toBe(true);
  });

  it('installs the dependencies without the dev ones, then only the dev ones the build needs, at the lockfile versions', () => {
    const script = runs(build).join('\n');
    expect(script, 'the workspace installed without its dev dependencies').toMatch(/\bnpm ci --omit=dev\b/);
    const installs = script.match(/\bnpm (ci|install|i|add)\b[^\n&|;]*/g) ?? [];
    expect(installs).toHaveLength(2);
    // The second adds named packages as dependencies without writing package.json or the lockfile.
    expect(installs[1]).toMatch(/^npm install --no-save --save-prod --omit=dev\b/);
    const named =
      /\[((?:'[a-z0-9@/.-]+'(?:, )?)+)\]\.map\(\(name\) => name \+ '@' \+ require\('\.\/package-lock\.json'\)\.packages\['node_modules\/' \+ name\]\.version\)/.exec(
        script,
      );
    const tools = (named?.[1] ?? '').split(', ').map((name) => name.slice(1, -1));
    expect(tools).toEqual(['tsx', 'swagger-ui-dist', '@aws-sdk/client-s3', '@aws-sdk/lib-storage', '@aws-sdk/s3-request-presigner']);
    const devDependencies = { ...pkg(''), ...pkg('packages/platform/') };
    const lock = JSON.parse(read('package-lock.json')) as { packages: Record<string, { version?: string; dev?: boolean }> };
    for (const tool of tools) {
      expect(devDependencies[tool], `${tool}: a dev dependency of one of the packages`).toBeDefined();
      expect(lock.packages[`node_modules/${tool}`]?.version, `${tool} in the lockfile`).toMatch(/^\d+\.\d+\.\d+/);
    }
  });

  it('copies only paths that exist in the repository and in the build context', () => {
    for (const stage of stages) {
      for (const copy of copies(stage).filter((c) => c.from === undefined)) {
        for (const source of copy.sources) {
          expect(existsSync(`${ROOT}${source}`), `${file}: COPY ${source}`).toBe(true);
          for (const path of filesUnder(source)) expect(included(path), `${path} is excluded by .dockerignore`).toBe(true);
        }
      }
    }
  });

  it('copies --from earlier named stages only; from a bare image only the Node binary, from the init stage only tini', () => {
    stages.forEach((stage, index) => {
      for (const copy of copies(stage).filter((c) => c.from !== undefined)) {
        const sourceIndex = stages.findIndex((candidate) => candidate.name === copy.from);
        expect(sourceIndex, `${file}: COPY --from=${copy.from}`).toBeGreaterThanOrEqual(0);
        expect(sourceIndex).toBeLessThan(index);
        const source = stages[sourceIndex] as Stage;
        if (source.name === 'init') {
          expect(copy.sources).toEqual(['/usr/bin/tini-static']);
        } else if (source !== build) {
          expect(source.instructions.length, `${file}: stage ${copy.from} should be a bare image`).toBe(0);
          for (const path of copy.sources) expect(path).toBe('/usr/local/bin/node');
        }
      }
    });
  });

  it('has as entrypoint the bundle under tini (PID 1), with source maps on, copied from the build stage', () => {
    const entrypoint = final.instructions.find((instruction) => instruction.keyword === 'ENTRYPOINT');
    const command = JSON.parse(entrypoint?.args ?? 'null') as string[];
    expect(command).toEqual(['/usr/bin/tini', '--', 'node', '--enable-source-maps', 'dist/worker.js']);
    // The young generation capped (README, "Build and push the image": issue 19's RSS growth).
    const env = final.instructions.filter((instruction) => instruction.keyword === 'ENV').map((instruction) => instruction.args);
    expect(env).toContain('NODE_OPTIONS=--max-semi-space-size=2');
    const fromBuild = copies(final).filter((c) => c.from === 'build');
    // image/ holds dist/ and the WORKER folder's test_input.json (when it has one).
    const image = fromBuild.find((c) => posix.resolve(workdir(final), c.dest) === workdir(final));
    expect(image?.sources.map((source) => source.replace(/\/$/, ''))).toEqual([posix.join(workdir(build), 'image')]);
    expect(runs(build).join('\n')).toContain('--outdir image/dist');
    expect(runs(build).join('\n')).toContain('image/test_input.json');
  });

  it('runs as a non-root user that exists in the image', () => {
    const users = final.instructions.filter((instruction) => instruction.keyword === 'USER').map((instruction) => instruction.args);
    const user = users.at(-1);
    expect(user).toBeDefined();
    expect(user).not.toMatch(/^(root|0)(:|$)/);
    const lastUser = final.instructions.findLastIndex((instruction) => instruction.keyword === 'USER');
    expect(final.instructions.slice(lastUser).some((instruction) => instruction.keyword === 'RUN')).toBe(false);
    const createdHere = runs(final).some((script) => new RegExp(`useradd\\b[^;&]*\\b${user}\\b`).test(script));
    const nodeImageUser = user === 'node' && /^node:/.test(final.base);
    expect(createdHere || nodeImageUser, `${file}: user ${user} is not created`).toBe(true);
  });

  it('puts no dependencies and no package manager in the final stage: the bundle is self-contained', () => {
    expect(runs(final).join('\n')).not.toMatch(/\bnpm\b/);
    for (const copy of copies(final)) {
      for (const source of copy.sources) expect(source).not.toMatch(/node_modules|package(-lock)?\.json|\/npm$/);
    }
    expect(final.instructions.some((i) => i.keyword === 'ENV' && /NODE_ENV=production/.test(i.args))).toBe(true);
  });

  it('says in its header how a worker in its own repository gets the same recipe', () => {
    expect(dockerfile.comments).toContain('npx serverless-worker init');
  });
});

describe('image kinds', () => {
  it('Dockerfile.gpu defaults to an NVIDIA CUDA runtime base and documents the ROCm base for AMD', () => {
    const gpu = parseDockerfile(read('Dockerfile.gpu'));
    expect(gpu.globalArgs.get('BASE_IMAGE')).toMatch(/^nvidia\/cuda:12\.[0-9.]+-runtime-ubuntu22\.04$/);
    expect(gpu.stages.at(-1)?.base).toBe(gpu.globalArgs.get('BASE_IMAGE'));
    expect(gpu.comments).toContain('--build-arg BASE_IMAGE=rocm/dev-ubuntu-22.04');
    // Node 24 is installed into the GPU base from the official image.
    expect(gpu.globalArgs.get('NODE_IMAGE')).toMatch(/^node:24[.-]/);
  });

  it('Dockerfile.cpu is node:24 slim based', () => {
    const cpu = parseDockerfile(read('Dockerfile.cpu'));
    expect(cpu.stages.at(-1)?.base).toMatch(/^node:24[.-](.*-)?slim$/);
  });

  it('both have the same build stage', () => {
    const buildOf = (path: string) => parseDockerfile(read(path)).stages.find((stage) => stage.name === 'build')?.instructions;
    expect(buildOf('Dockerfile.gpu')).toEqual(buildOf('Dockerfile.cpu'));
  });

  it('.dockerignore keeps node_modules and build output out of the context', () => {
    for (const path of ['node_modules/zod/package.json', 'dist/index.js', 'dist-worker/worker.js', 'examples/echo/node_modules/x', '.git/HEAD', '.env']) {
      expect(included(path), path).toBe(false);
    }
    for (const path of ['package.json', 'src/index.ts', 'bin/serverless-worker.js', 'examples/echo/worker.ts', 'tsconfig.json']) {
      expect(included(path), path).toBe(true);
    }
  });
});
