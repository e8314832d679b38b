/**
 * No Docker engine runs here, so the images are checked by parsing their Dockerfiles:
 * every stage named, every COPY source present in the repository and in the build
 * context (.dockerignore), every COPY --from naming an earlier stage and a path that
 * stage produces, the entrypoint a file the build stage compiles, a non-root USER, and
 * no dev dependencies in the final stage.
 */
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const read = (path: string) => readFileSync(`${ROOT}${path}`, 'utf8');

// ---- a small Dockerfile parser: continuations, comments, ARG defaults, stages ----

interface Instruction {
  keyword: string;
  /** The text after the keyword, variables expanded with the ARG defaults in scope. */
  args: string;
}

interface Stage {
  name: string | undefined;
  /** The FROM image, expanded. */
  base: string;
  instructions: Instruction[];
}

interface Dockerfile {
  globalArgs: Map<string, string>;
  stages: Stage[];
  /** Comment text, for documented options (the ROCm base). */
  comments: string;
}

function expand(text: string, vars: Map<string, string>): string {
  return text.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)/g, (whole, braced?: string, bare?: string) => {
    const name = braced ?? bare ?? '';
    return vars.get(name) ?? whole;
  });
}

function parseDockerfile(text: string): Dockerfile {
  const logical: string[] = [];
  const comments: string[] = [];
  let pending = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line.startsWith('#')) {
      comments.push(line);
      continue;
    }
    if (pending === '' && line === '') continue;
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1)} `;
      continue;
    }
    logical.push(`${pending}${line}`.trim());
    pending = '';
  }
  const globalArgs = new Map<string, string>();
  const stages: Stage[] = [];
  let stageVars = new Map<string, string>();
  for (const line of logical) {
    const match = /^(\S+)\s*(.*)$/.exec(line);
    if (!match) continue;
    const keyword = (match[1] ?? '').toUpperCase();
    const rest = match[2] ?? '';
    if (keyword === 'ARG') {
      const [name = '', value = ''] = rest.split('=', 2);
      if (stages.length === 0) globalArgs.set(name, value);
      // Inside a stage, a bare ARG re-imports the global default.
      else stageVars.set(name, value === '' ? (globalArgs.get(name) ?? '') : expand(value, stageVars));
      const current = stages.at(-1);
      if (current) current.instructions.push({ keyword, args: rest });
      continue;
    }
    if (keyword === 'FROM') {
      const from = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(rest);
      stages.push({ name: from?.[2], base: expand(from?.[1] ?? '', globalArgs), instructions: [] });
      stageVars = new Map();
      continue;
    }
    stages.at(-1)?.instructions.push({ keyword, args: expand(rest, stageVars) });
  }
  return { globalArgs, stages, comments: comments.join('\n') };
}

interface Copy {
  from: string | undefined;
  sources: string[];
  dest: string;
}

function copies(stage: Stage): Copy[] {
  return stage.instructions
    .filter((instruction) => instruction.keyword === 'COPY')
    .map((instruction) => {
      const words = instruction.args.split(/\s+/);
      const from = words.find((word) => word.startsWith('--from='))?.slice('--from='.length);
      const paths = words.filter((word) => !word.startsWith('--'));
      return { from, sources: paths.slice(0, -1), dest: paths.at(-1) ?? '' };
    });
}

/** The stage's WORKDIR at the end (absolute). */
function workdir(stage: Stage): string {
  let dir = '/';
  for (const instruction of stage.instructions) {
    if (instruction.keyword === 'WORKDIR') dir = posix.resolve(dir, instruction.args);
  }
  return dir;
}

function runs(stage: Stage): string[] {
  return stage.instructions.filter((instruction) => instruction.keyword === 'RUN').map((instruction) => instruction.args);
}

/** The ARG default of `name` declared inside `stage`. */
function stageArg(stage: Stage, name: string): string | undefined {
  const declaration = stage.instructions.find((instruction) => instruction.keyword === 'ARG' && instruction.args.startsWith(`${name}=`));
  return declaration?.args.slice(name.length + 1);
}

// ---- .dockerignore, with Docker's semantics: last match wins, a match on a parent excludes the children ----

function dockerignore(): (path: string) => boolean {
  const rules = read('.dockerignore')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const negated = line.startsWith('!');
      const pattern = (negated ? line.slice(1) : line).replace(/^\/+/, '');
      const source = pattern
        .split('/')
        .map((segment) => (segment === '**' ? '\u0000' : segment.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*').replace(/\?/g, '[^/]')))
        .join('/')
        .replace(/\u0000\//g, '(?:.*/)?')
        .replace(/\/\u0000/g, '(?:/.*)?')
        .replace(/\u0000/g, '.*');
      return { negated, regex: new RegExp(`^${source}$`) };
    });
  return (path) => {
    const prefixes = path.split('/').map((_segment, index, parts) => parts.slice(0, index + 1).join('/'));
    let excluded = false;
    for (const rule of rules) {
      if (prefixes.some((prefix) => rule.regex.test(prefix))) excluded = !rule.negated;
    }
    return !excluded;
  };
}

function filesUnder(path: string): string[] {
  const full = `${ROOT}${path}`;
  if (!statSync(full).isDirectory()) return [path];
  return readdirSync(full, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => posix.join(path, posix.relative(full, posix.join(entry.parentPath, entry.name))));
}

// ---- what the build stage produces ----

function tsconfigOut(path: string): { outDir: string; rootDir?: string; include?: string[] } {
  const config = JSON.parse(read(path)) as { compilerOptions?: { outDir?: string; rootDir?: string }; include?: string[] };
  return { outDir: config.compilerOptions?.outDir ?? '', rootDir: config.compilerOptions?.rootDir, include: config.include };
}

/** Paths (relative to the build WORKDIR) that the build stage's RUNs write. */
function produced(stage: Stage): string[] {
  const out: string[] = [];
  const script = runs(stage).join('\n');
  if (/\bnpm ci\b/.test(script)) out.push('node_modules');
  if (/\bnpm run build\b/.test(script)) {
    const build = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts.build ?? '';
    const project = /tsc -p ([^\s;&]+)/.exec(build)?.[1];
    if (project) out.push(tsconfigOut(project).outDir);
  }
  for (const match of script.matchAll(/tsc -p ([^\s;&]+)/g)) out.push(tsconfigOut(match[1] ?? '').outDir);
  for (const match of script.matchAll(/cp -R \S+ (\S+?)\/?(?:;|$|\s)/g)) out.push(match[1] ?? '');
  return out.filter((path) => path !== '');
}

// ---- the checks ----

const DOCKERFILES = ['Dockerfile.gpu', 'Dockerfile.cpu'] as const;
const included = dockerignore();

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

  it('builds with Node 20: the build stage runs npm ci and npm run build on a node:20 image', () => {
    expect(build.base).toMatch(/^node:20[.-]/);
    const script = runs(build).join('\n');
    expect(script).toMatch(/\bnpm ci\b(?![^\n]*--omit=dev)/);
    expect(script).toContain('npm run build');
    expect(script).toContain('npx tsc -p tsconfig.worker.json');
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

  it('copies --from earlier named stages only, and only what those stages produce', () => {
    stages.forEach((stage, index) => {
      for (const copy of copies(stage).filter((c) => c.from !== undefined)) {
        const sourceIndex = stages.findIndex((candidate) => candidate.name === copy.from);
        expect(sourceIndex, `${file}: COPY --from=${copy.from}`).toBeGreaterThanOrEqual(0);
        expect(sourceIndex).toBeLessThan(index);
        const source = stages[sourceIndex] as Stage;
        if (source === build) {
          const outputs = produced(build);
          for (const path of copy.sources) {
            const relative = posix.relative(workdir(build), path);
            expect(
              outputs.some((output) => relative === output || relative.startsWith(`${output}/`)),
              `${file}: COPY --from=build ${path}: not produced by the build stage (${outputs.join(', ')})`,
            ).toBe(true);
          }
        } else {
          // Other stages are plain images (the Node runtime); only its install paths are taken.
          expect(source.instructions.length, `${file}: stage ${copy.from} should be a bare image`).toBe(0);
          for (const path of copy.sources) expect(path).toMatch(/^\/usr\/local\/(bin\/node|lib\/node_modules\/npm)$/);
        }
      }
    });
  });

  it('has as entrypoint the worker the build stage compiles from the WORKER folder', () => {
    const entrypoint = final.instructions.find((instruction) => instruction.keyword === 'ENTRYPOINT');
    const command = JSON.parse(entrypoint?.args ?? 'null') as string[];
    expect(command[0]).toBe('node');
    const target = posix.resolve(workdir(final), command[1] ?? '');
    // The final stage receives the file through a COPY --from=build...
    const copy = copies(final).find(
      (c) => c.from === 'build' && (target === posix.resolve(workdir(final), c.dest) || target.startsWith(`${posix.resolve(workdir(final), c.dest)}/`)),
    );
    expect(copy, `${file}: nothing copies ${target} from the build stage`).toBeDefined();
    // ...which is tsconfig.worker.json's output for worker-src/worker.ts, copied from WORKER.
    const worker = tsconfigOut('tsconfig.worker.json');
    const inBuild = posix.join(copy?.sources[0] ?? '', posix.relative(posix.resolve(workdir(final), copy?.dest ?? ''), target));
    expect(posix.relative(workdir(build), inBuild)).toBe(posix.join(worker.outDir, 'worker.js'));
    expect(worker.rootDir).toBe('worker-src');
    const defaultWorker = stageArg(build, 'WORKER') ?? '';
    expect(defaultWorker).not.toBe('');
    expect(runs(build).join('\n')).toContain(`cp -R "${defaultWorker}/." worker-src/`);
    expect(existsSync(`${ROOT}${defaultWorker}/worker.ts`), `${defaultWorker}/worker.ts`).toBe(true);
    expect(existsSync(`${ROOT}${defaultWorker}/test_input.json`), `${defaultWorker}/test_input.json`).toBe(true);
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

  it('puts no dev dependencies in the final stage', () => {
    const script = runs(final).join('\n');
    const installs = script.match(/\bnpm (ci|install|i)\b[^;&\n]*/g) ?? [];
    expect(installs.length).toBeGreaterThan(0);
    for (const install of installs) expect(install).toContain('--omit=dev');
    // The app's dependencies come only from that install: none copied from the build
    // stage or the context (the Node stage's npm is the package manager, not a dependency).
    for (const copy of copies(final).filter((c) => c.from === undefined || c.from === 'build')) {
      for (const source of copy.sources) expect(source).not.toMatch(/node_modules(\/|$)/);
    }
    expect(final.instructions.some((i) => i.keyword === 'ENV' && /NODE_ENV=production/.test(i.args))).toBe(true);
  });
});

describe('image kinds', () => {
  it('Dockerfile.gpu defaults to an NVIDIA CUDA runtime base and documents the ROCm base for AMD', () => {
    const gpu = parseDockerfile(read('Dockerfile.gpu'));
    expect(gpu.globalArgs.get('BASE_IMAGE')).toMatch(/^nvidia\/cuda:12\.[0-9.]+-runtime-ubuntu22\.04$/);
    expect(gpu.stages.at(-1)?.base).toBe(gpu.globalArgs.get('BASE_IMAGE'));
    expect(gpu.comments).toContain('--build-arg BASE_IMAGE=rocm/dev-ubuntu-22.04');
    // Node 20 is installed into the GPU base from the official image.
    expect(gpu.globalArgs.get('NODE_IMAGE')).toMatch(/^node:20[.-]/);
  });

  it('Dockerfile.cpu is node:20 slim based', () => {
    const cpu = parseDockerfile(read('Dockerfile.cpu'));
    expect(cpu.stages.at(-1)?.base).toMatch(/^node:20[.-](.*-)?slim$/);
  });

  it('the compiled worker can import the package by name: package.json exports point into the build output', () => {
    const pkg = JSON.parse(read('package.json')) as { name: string; exports: Record<string, { import: string }> };
    expect(pkg.name).toBe('serverless-worker');
    const outDir = tsconfigOut('tsconfig.build.json').outDir;
    expect(pkg.exports['.']?.import.startsWith(`./${outDir}/`)).toBe(true);
    const worker = JSON.parse(read('tsconfig.worker.json')) as { compilerOptions: { paths: object }; include: string[] };
    // No path alias: 'serverless-worker' resolves through package.json, as it will at run time.
    expect(worker.compilerOptions.paths).toEqual({});
    expect(worker.include).toEqual(['worker-src']);
  });

  it('.dockerignore keeps node_modules and build output out of the context', () => {
    for (const path of ['node_modules/zod/package.json', 'dist/index.js', 'dist-worker/worker.js', 'examples/echo/node_modules/x', '.git/HEAD', '.env']) {
      expect(included(path), path).toBe(false);
    }
    for (const path of ['package.json', 'src/index.ts', 'examples/echo/worker.ts', 'tsconfig.worker.json']) {
      expect(included(path), path).toBe(true);
    }
  });
});
