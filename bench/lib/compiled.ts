/**
 * @module bench/lib/compiled
 * Compiled JavaScript for child processes (and for a store a bench runs in process), as a worker
 * image runs it: the sources the children need (src/, bench/children/ and bench/lib/), and the
 * platform's .sql migration files, compiled by tsc with the options of
 * tsconfig.build.json (what `npm run build` uses), into node_modules/.cache/ so that
 * the compiled files resolve the project's dependencies as dist/ does. Rebuilt only
 * when a source file is newer than the last build.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, cpSync, existsSync, mkdirSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { bundleWorker } from '../../packages/platform/src/build/bundle.js';
import { REPO_ROOT } from './child.js';

// One folder per checkout, so that a second worktree (a before/after comparison) sharing
// node_modules through a link does not overwrite this one's build.
const OUT_DIR = join(REPO_ROOT, 'node_modules', '.cache', `serverless-worker-bench-${createHash('sha256').update(REPO_ROOT).digest('hex').slice(0, 8)}`);
const STAMP = join(OUT_DIR, '.built');
const SOURCE_DIRS = ['src', 'packages/platform/src', 'bench/children', 'bench/lib'];

/**
 * The two packages as the compiled files import them (the platform's `serverless-worker/internal`,
 * the SDK's `serverless-worker-platform/...`): a package folder of each under the output's
 * node_modules, its exports naming the compiled files, found before the repository's own.
 */
const COMPILED_PACKAGES = [
  {
    name: 'serverless-worker',
    target: 'src',
    exports: {
      '.': './src/index.js',
      './testing': './src/testing/index.js',
      './harness': './src/exports/harness.js',
      './runtime': './src/exports/runtime.js',
      './internal': './src/exports/internal.js',
    },
  },
  {
    name: 'serverless-worker-platform',
    target: 'packages/platform/src',
    exports: { '.': './src/index.js', './serve-api': './src/local/serve-api.js', './cli': './src/cli/platform-commands.js' },
  },
];

function writeCompiledPackages(): void {
  for (const pkg of COMPILED_PACKAGES) {
    const dir = join(OUT_DIR, 'node_modules', pkg.name);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: pkg.name, type: 'module', exports: pkg.exports }));
    symlinkSync(join(OUT_DIR, pkg.target), join(dir, 'src'), 'dir');
  }
}

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestMtime(path));
    else if (entry.name.endsWith('.ts')) newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

let built = false;

/** Compile (when stale) and answer the folder holding the compiled sources. */
export function ensureCompiled(log: (line: string) => void = (line) => void process.stderr.write(`${line}\n`)): string {
  if (built) return OUT_DIR;
  const sources = Math.max(...SOURCE_DIRS.map((dir) => newestMtime(join(REPO_ROOT, dir))));
  if (!existsSync(STAMP) || statSync(STAMP).mtimeMs < sources) {
    log(`  compiling ${SOURCE_DIRS.join(', ')} with tsc (tsconfig.build.json options) into ${relative(REPO_ROOT, OUT_DIR)}`);
    mkdirSync(OUT_DIR, { recursive: true });
    const config = join(OUT_DIR, 'tsconfig.json');
    writeFileSync(
      config,
      JSON.stringify({
        extends: join(REPO_ROOT, 'tsconfig.build.json'),
        compilerOptions: {
          rootDir: REPO_ROOT,
          outDir: OUT_DIR,
          declaration: false,
          sourceMap: false,
          inlineSources: false,
          incremental: false,
          baseUrl: REPO_ROOT,
          // The sources of both packages, as the repository's own tsconfig.json maps them.
          paths: {
            'serverless-worker/internal': ['./src/exports/internal.ts'],
            'serverless-worker-platform/serve-api': ['./packages/platform/src/local/serve-api.ts'],
            'serverless-worker-platform/cli': ['./packages/platform/src/cli/platform-commands.ts'],
            'serverless-worker-platform': ['./packages/platform/src/index.ts'],
          },
        },
        include: SOURCE_DIRS.map((dir) => join(REPO_ROOT, dir)),
      }),
    );
    execFileSync(process.execPath, [join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', config], { cwd: REPO_ROOT, stdio: 'inherit' });
    // The .sql migration files beside the compiled ones, as the platform's build copies them into dist/ (tsc copies only
    // what it compiles): a harness on PostgreSQL reads them at run time.
    cpSync(join(REPO_ROOT, 'packages', 'platform', 'src'), join(OUT_DIR, 'packages', 'platform', 'src'), {
      recursive: true,
      filter: (source) => !/\.[^/\\]+$/.test(source) || source.endsWith('.sql'),
    });
    // "type": "module", so that node reads the compiled .js files as ESM, as under dist/.
    copyFileSync(join(REPO_ROOT, 'package.json'), join(OUT_DIR, 'package.json'));
    // The platform's files need a package.json of their own: under the root's (named
    // serverless-worker, exports into dist/) their `serverless-worker/internal`
    // imports would resolve to the root package itself (a self-reference into dist/),
    // not to the compiled SDK below; with this one (no exports) they go to node_modules.
    writeFileSync(join(OUT_DIR, 'packages', 'platform', 'package.json'), JSON.stringify({ name: 'serverless-worker-platform', type: 'module' }));
    writeCompiledPackages();
    writeFileSync(STAMP, new Date().toISOString());
  }
  built = true;
  return OUT_DIR;
}

/**
 * How a child runs: TypeScript through tsx, the compiled JavaScript, or a bundle written
 * by `serverless-worker build` itself (bundleWorker: minified, the source map of the
 * author's files, the watchdog thread's file and a `{"type":"module"}` package.json
 * beside it); `bundle-split` with `--splitting` (what the worker loads on demand in
 * chunk files); `bundle-full-map` with `--full-source-map` (every dependency mapped, the
 * map before issue 19's reduction). Run a bundle with `--enable-source-maps` for the
 * image's command.
 */
export type ChildRuntime = 'tsx' | 'compiled' | 'bundle' | 'bundle-split' | 'bundle-full-map';

const bundled = new Map<string, string>();

/** Bundle `script` as `serverless-worker build` does (once per bench process) into <cache>/<runtime>/. */
async function ensureBundled(script: string, runtime: 'bundle' | 'bundle-split' | 'bundle-full-map'): Promise<string> {
  const key = `${runtime}:${script}`;
  const done = bundled.get(key);
  if (done) return done;
  const outdir = join(ensureCompiled(), runtime);
  rmSync(outdir, { recursive: true, force: true });
  const output = await bundleWorker({
    entry: join(REPO_ROOT, script),
    outdir,
    splitting: runtime === 'bundle-split',
    fullSourceMap: runtime === 'bundle-full-map',
    cwd: REPO_ROOT,
  });
  bundled.set(key, output.bundle);
  return output.bundle;
}

/** The file to run for `script` (a path like `bench/children/x.ts`) under `runtime`, built first when needed. */
export async function childScript(script: string, runtime: ChildRuntime): Promise<string> {
  if (runtime === 'tsx') return join(REPO_ROOT, script);
  if (runtime === 'bundle' || runtime === 'bundle-split' || runtime === 'bundle-full-map') return ensureBundled(script, runtime);
  return join(ensureCompiled(), script.replace(/\.ts$/, '.js'));
}
