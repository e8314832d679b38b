/**
 * @module test/compiled-fixtures
 * How a test starts a TypeScript fixture (a worker, the CLI from src/) as a child
 * process: `node --enable-source-maps <bundle>.js`, its esbuild bundle compiled once and cached, instead of
 * `node --import tsx <file>`. A tsx start cost about 0.5 s of CPU before any of our code
 * (Node 20's off-thread loader hooks, in the watchdog thread too), and the suite starts
 * some 270 children a run. The bundle (test/setup/bundle-fixture.mjs) holds the
 * fixture's own modules and the installed packages every child loads at start (zod, the
 * fastify family, pino's, PostgreSQL's client, commander: about a fifth of a start's
 * CPU was resolving, reading and compiling their 230 files); the other installed packages load from
 * node_modules (`packages: 'imported'` loads them all so, for a test that watches which
 * packages a process resolves); modules see their source URL as `import.meta.url`, the
 * watchdog thread is emitted beside the bundle, and a `--serve-api` child re-runs its
 * parent's bundle (process.argv[1]).
 *
 * Cache: test-artifacts/compiled-fixtures/<name>-<hash of its path>/, one folder per
 * build, `current.json` naming the latest with the size and mtime of every input file; a
 * build is reused while they all match (checked once per test process and fixture).
 * Concurrent test processes may build the same fixture twice; each build is a new folder,
 * never changed, so a running child keeps its files. `npm test` builds every fixture found
 * (fixtureFiles) at its start in one build, under test-artifacts/compiled-fixtures/batches/,
 * each fixture's current.json naming its file there (prebuildFixtures).
 *
 * Fallback to tsx (`nodeArgsFor` answers `--import tsx <file>`): a file outside this
 * repository (a scaffolded project in a temporary folder resolves its own packages), a
 * file that is not TypeScript, a file that starts a TypeScript sibling with its own exec
 * flags (examples/load-balancing/local.ts starts worker.ts so: STARTS_TS_CHILDREN), any
 * fixture with a test_input.json beside it (the echo, openai, probe and stream examples: they
 * read it beside their script, process.argv[1], and log that path, as their READMEs show
 * under tsx), a build that fails (said once on stderr), and every file when SW_TEST_TSX=1.
 * The load-balancing examples' workers (no test_input.json) run compiled: 15 tsx starts a run,
 * about 1.7 s of CPU each against 0.6 compiled.
 */
import { createHash } from 'node:crypto';
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { z } from 'zod';
import { EXTRA_ENTRY_POINTS } from '../packages/platform/src/build/extra-entry-points.js';
import { WATCHDOG_THREAD_FILE } from '../src/transports/watchdog/thread-file.js';

const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));
const CACHE = join(REPO_ROOT, 'test-artifacts', 'compiled-fixtures');
const BUNDLER = fileURLToPath(new URL('./setup/bundle-fixture.mjs', import.meta.url));
/**
 * tsx's loader by absolute URL, so a child can run from any directory. Resolved when first
 * asked: vitest's global setups load this module too (fixtures-global-setup.ts), where
 * `import.meta.resolve` is not supported.
 */
let tsxLoader: string | undefined;
function tsxLoaderUrl(): string {
  tsxLoader ??= import.meta.resolve('tsx');
  return tsxLoader;
}
/** Files whose presence beside the worker script changes what it does (read beside process.argv[1]): such a fixture runs through tsx. */
const BESIDE_SCRIPT = ['test_input.json'];
/** Files that start a TypeScript file as a child with their own `process.execArgv` (tsx's loader): they need it. */
const STARTS_TS_CHILDREN = ['examples/load-balancing/local.ts'];
/** Builds older than this are removed: a fixture's when it is built again, the batches when `npm test` builds them again. */
const STALE_BUILD_MS = 3_600_000;
const execFileAsync = promisify(execFile);

const Manifest = z.object({
  file: z.string(),
  inputs: z.array(z.tuple([z.string(), z.number(), z.number()])),
});
type Manifest = z.infer<typeof Manifest>;

const BundlerOutput = z.object({ bundles: z.array(z.object({ entry: z.string(), file: z.string(), inputs: z.array(z.string()) })).min(1) });

/** Checked bundles of this process, by fixture path and packages. */
const checked = new Map<string, string | undefined>();

/**
 * Where a fixture's installed packages load from: 'bundled', the ones every child loads at
 * start in the bundle, the rest from node_modules; 'imported', every one from node_modules,
 * as an installed package loads them (a test of which packages a process resolves).
 */
type FixturePackages = 'bundled' | 'imported';

export interface FixtureOptions {
  /** Default 'bundled'. */
  readonly packages?: FixturePackages;
}

/** The arguments of `node` that run `file`: its compiled bundle, or `--import tsx file` (see the module's note). */
export function nodeArgsFor(file: string, options: FixtureOptions = {}): string[] {
  const bundle = compiledFixture(file, options);
  // Source maps: a stack trace names the fixture's source files, as under tsx.
  return bundle === undefined ? ['--import', tsxLoaderUrl(), file] : ['--enable-source-maps', bundle];
}

/** `nodeArgsFor` as a shell command line (the launcher's worker commands). */
export function nodeCommandFor(file: string): string {
  return [process.execPath, ...nodeArgsFor(file)].map((word) => `"${word}"`).join(' ');
}

/** The cached bundle of `file`, built now if missing or stale; undefined where it runs through tsx. */
export function compiledFixture(file: string, options: FixtureOptions = {}): string | undefined {
  const path = resolve(REPO_ROOT, file);
  const packages = options.packages ?? 'bundled';
  const key = `${path}\0${packages}`;
  if (checked.has(key)) return checked.get(key);
  let bundle: string | undefined;
  if (compilable(path)) {
    const folder = entryFolder(path, packages);
    try {
      bundle = freshBundle(folder) ?? build(path, folder, packages);
    } catch (error) {
      process.stderr.write(`test/compiled-fixtures: ${relative(REPO_ROOT, path)} runs through tsx, its bundle failed: ${(error as Error).message}\n`);
    }
  }
  checked.set(key, bundle);
  return bundle;
}

/** A fixture whose build carries the watchdog thread beside it (every build does; this one is small and always compiled). */
const WATCHDOG_CARRIER = 'test/fixtures/workers/echo.ts';

/**
 * The compiled watchdog thread the fixtures run with (`watchdog-thread.js` beside a fixture's
 * bundle, built from src/ and rebuilt with it: a fixture's inputs include the thread's), for
 * SW_DEV_WATCHDOG_THREAD (src/transports/watchdog/thread-file.ts): code run from src/ in
 * the test process, or in a child through tsx, then starts it instead of the TypeScript
 * through tsx in the thread (about 0.45 s of CPU a start, against 0.07 s). Undefined when
 * the fixtures run through tsx.
 */
export function compiledWatchdogThread(): string | undefined {
  const bundle = compiledFixture(WATCHDOG_CARRIER);
  if (bundle === undefined) return undefined;
  const thread = join(dirname(bundle), `${WATCHDOG_THREAD_FILE.name}.js`);
  return existsSync(thread) ? thread : undefined;
}

function compilable(path: string): boolean {
  const inRepo = relative(REPO_ROOT, path);
  if (
    process.env.SW_TEST_TSX === '1' ||
    !/\.[cm]?ts$/.test(path) ||
    inRepo.startsWith('..') ||
    STARTS_TS_CHILDREN.includes(inRepo) ||
    path.includes('/node_modules/')
  )
    return false;
  return !BESIDE_SCRIPT.some((name) => existsSync(join(dirname(path), name)));
}

function entryFolder(path: string, packages: FixturePackages): string {
  const hash = createHash('sha256').update(relative(REPO_ROOT, path)).digest('hex').slice(0, 10);
  return join(CACHE, `${basename(path).replace(/\.[cm]?ts$/, '')}-${hash}${packages === 'imported' ? '-imported' : ''}`);
}

function signature(file: string): [string, number, number] {
  const stat = statSync(file);
  return [file, stat.mtimeMs, stat.size];
}

/** The bundle of the last build in `folder`, while every input is as it was then. */
function freshBundle(folder: string): string | undefined {
  let manifest: Manifest;
  try {
    manifest = Manifest.parse(JSON.parse(readFileSync(join(folder, 'current.json'), 'utf8')));
  } catch {
    return undefined;
  }
  if (!existsSync(manifest.file)) return undefined;
  for (const [file, mtimeMs, size] of manifest.inputs) {
    try {
      const [, nowMtime, nowSize] = signature(file);
      if (nowMtime !== mtimeMs || nowSize !== size) return undefined;
    } catch {
      return undefined;
    }
  }
  return manifest.file;
}

function build(path: string, folder: string, packages: FixturePackages): string {
  removeStaleBuilds(folder);
  const outdir = join(folder, `${Date.now()}-${process.pid}`);
  const stdout = execFileSync(process.execPath, [BUNDLER, bundlerRequest([path], outdir, packages)], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 120_000,
  });
  const [bundle] = BundlerOutput.parse(JSON.parse(stdout)).bundles;
  if (bundle === undefined) throw new Error('the bundler answered no bundle');
  writeManifest(folder, bundle);
  return bundle.file;
}

/** `folder` made, and its builds older than STALE_BUILD_MS removed (its current.json kept). */
function removeStaleBuilds(folder: string): void {
  mkdirSync(folder, { recursive: true });
  for (const old of readdirSync(folder)) {
    const oldPath = join(folder, old);
    try {
      if (old !== 'current.json' && Date.now() - statSync(oldPath).mtimeMs > STALE_BUILD_MS) rmSync(oldPath, { recursive: true, force: true });
    } catch {
      // Removed meanwhile by another test process building the same fixture.
    }
  }
}

function bundlerRequest(entries: readonly string[], outdir: string, packages: FixturePackages): string {
  const extraEntries = EXTRA_ENTRY_POINTS.map((entry) => ({ in: join(REPO_ROOT, 'src', `${entry.source}.ts`), out: entry.out }));
  return JSON.stringify({ entries, outdir, extraEntries, bundleStartPackages: packages === 'bundled' });
}

/** `folder`'s current.json names `bundle` (written whole, then renamed: a reader sees the old or the new). */
function writeManifest(folder: string, bundle: { file: string; inputs: readonly string[] }): void {
  mkdirSync(folder, { recursive: true });
  const manifest: Manifest = { file: bundle.file, inputs: [...bundle.inputs, BUNDLER].map(signature) };
  const temporary = join(folder, `current.json.${process.pid}`);
  writeFileSync(temporary, JSON.stringify(manifest));
  renameSync(temporary, join(folder, 'current.json'));
}

/** Where fixtures live: every TypeScript file in a `fixtures` folder under test/, the CLI, the load-balancing example's workers. */
function fixtureFiles(): string[] {
  const inTest = (readdirSync(join(REPO_ROOT, 'test'), { recursive: true, encoding: 'utf8' }) as string[])
    .filter((file) => /(^|\/)fixtures\/.*\.ts$/.test(file) && !file.endsWith('.d.ts'))
    .map((file) => join(REPO_ROOT, 'test', file));
  const loadBalancing = join(REPO_ROOT, 'examples/load-balancing');
  const examples = readdirSync(loadBalancing)
    .filter((file) => /^worker.*\.ts$/.test(file))
    .map((file) => join(loadBalancing, file));
  return [...inTest, join(REPO_ROOT, 'src/cli/main.ts'), ...examples];
}

/**
 * Build every fixture (of `files`, default all: fixtureFiles) whose bundle is missing or stale in one esbuild build (its default
 * packages, 'bundled'), each fixture's current.json naming its file in the shared folder.
 * `npm test` does this at its start (test/setup/fixtures-global-setup.ts): 29 builds of one
 * fixture each took about 28 s of CPU a clean run, each parsing src/ and the start packages
 * again. Answers how many were built. If the build fails (a file esbuild cannot take), it
 * throws and writes nothing: each fixture is then built on its first ask, as without it.
 */
export async function prebuildFixtures(files: readonly string[] = fixtureFiles()): Promise<number> {
  const stale = files
    .map((file) => resolve(REPO_ROOT, file))
    .filter((path) => compilable(path) && freshBundle(entryFolder(path, 'bundled')) === undefined)
    .sort();
  if (stale.length === 0) return 0;
  const batches = join(CACHE, 'batches');
  removeStaleBuilds(batches);
  const outdir = join(batches, `${Date.now()}-${process.pid}`);
  const { stdout } = await execFileAsync(process.execPath, [BUNDLER, bundlerRequest(stale, outdir, 'bundled')], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    timeout: 300_000,
    maxBuffer: 64 * 1024 * 1024,
  });
  const { bundles } = BundlerOutput.parse(JSON.parse(stdout));
  for (const bundle of bundles) writeManifest(entryFolder(resolve(REPO_ROOT, bundle.entry), 'bundled'), bundle);
  return bundles.length;
}
