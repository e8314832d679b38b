/**
 * @module build/bundle
 * `serverless-worker build`: a worker's entry file and everything it imports (this
 * package, zod, pino, undici, ...) as one self-contained ESM file for Node 22.12+, with a
 * linked source map of the author's files (their sources embedded), so that an image
 * needs no node_modules and a job's error traceback names the author's lines when Node
 * runs with `--enable-source-maps`. The package's files that the runtime starts by path
 * (the heartbeat thread) are emitted beside the bundle, and a `{"type":"module"}`
 * package.json (build/bundle-output.ts). esbuild is loaded only here.
 */
import { mkdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { basename, dirname, extname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PRETTY_LOGS_PACKAGE, S3_CLIENT_PACKAGES, SDK_SOURCE_ROOT, ServerlessWorkerError } from 'serverless-worker/internal';
import { BUNDLED_UI_FOLDER } from '../harness/dashboard/static-files.js';
import { reduceSourceMaps, writeModulePackageJson } from './bundle-output.js';
import { commonJsDynamicImportPlugin } from './commonjs-dynamic-import.js';
import { sqlMigrationsPlugin } from './sql-migrations-plugin.js';
import { copyDashboardAssets } from './dashboard-assets.js';
import { EXTRA_ENTRY_POINTS } from './extra-entry-points.js';
const { existsSync } = process.getBuiltinModule('node:fs');

/**
 * CommonJS dependencies inside an ESM bundle call `require` for Node's built-ins;
 * ESM has none, so the bundle defines one first (esbuild's documented recipe).
 */
export const CREATE_REQUIRE_BANNER = "import { createRequire as __swCreateRequire } from 'node:module'; const require = __swCreateRequire(import.meta.url);";

/** Node version the bundle's syntax targets (the package's `engines`). */
export const BUNDLE_TARGET = 'node22.12';

export interface BundleOptions {
  /** The worker's entry file (the one that calls `serve()`). */
  entry: string;
  /** Output folder; default `dist`. The bundle is `<outdir>/<entry name>.js`. */
  outdir?: string;
  /** Minify (whitespace, syntax, identifiers; names of functions and classes are kept); default true. */
  minify?: boolean;
  /** Write `<bundle>.js.map` with the sources embedded; default true. */
  sourcemap?: boolean;
  /**
   * Keep the whole map (every dependency's and this package's mappings and sources).
   * Default false: the map names the author's files only (build/source-map.ts), which
   * is what a job's traceback needs; the whole one costs about 33 MiB of RSS under
   * `node --enable-source-maps` (bench/README.md).
   */
  fullSourceMap?: boolean;
  /**
   * Put what the worker loads only on demand (`import()`: the local API's harness and
   * server, metrics, ...) into chunk files under `<outdir>/chunks/` instead of the one
   * bundle: a smaller file to parse at start, at the cost of a folder instead of a file.
   * Default false.
   */
  splitting?: boolean;
  /** Working directory that relative paths start from; default process.cwd(). */
  cwd?: string;
}

export interface BundleOutput {
  /** Absolute path of the worker bundle. */
  readonly bundle: string;
  /** Every file written (bundle, maps, extra entry points), absolute, with its size in bytes. */
  readonly files: readonly { path: string; bytes: number }[];
}

/** The platform package's source folder: dist/ when installed, src/ in a clone run through tsx. */
const PACKAGE_SOURCE_ROOT = fileURLToPath(new URL('../', import.meta.url));

/** The extra entry points (the SDK's files) that exist in this copy of the SDK, as esbuild entries. */
export function extraEntryPoints(root: string = SDK_SOURCE_ROOT): { in: string; out: string }[] {
  const entries: { in: string; out: string }[] = [];
  for (const entry of EXTRA_ENTRY_POINTS) {
    const file = ['.js', '.ts'].map((ext) => join(root, `${entry.source}${ext}`)).find((path) => existsSync(path));
    if (file) entries.push({ in: file, out: entry.out });
  }
  return entries;
}

/**
 * The SDK's optional peer dependencies (the AWS SDK of the S3 helpers, pino-pretty) that the
 * worker's project does not install: left out of the bundle (external), where the helpers'
 * first call answers SW_S3_CLIENT_MISSING naming what to install, and logs are JSON lines, as
 * without a bundle. Installed, they are bundled like any dependency.
 */
export function missingOptionalPeers(entry: string): string[] {
  const require = createRequire(entry);
  return [...S3_CLIENT_PACKAGES, PRETTY_LOGS_PACKAGE].filter((name) => {
    try {
      require.resolve(name);
      return false;
    } catch {
      return true;
    }
  });
}

/** Bundle the worker at `options.entry`; throws SW_BUILD_FAILED with esbuild's messages. */
export async function bundleWorker(options: BundleOptions): Promise<BundleOutput> {
  const cwd = options.cwd ?? process.cwd();
  const entry = resolve(cwd, options.entry);
  if (!existsSync(entry)) {
    throw new ServerlessWorkerError(
      'SW_BUILD_FAILED',
      `Entry file ${options.entry} does not exist (looked in ${cwd}); expected the worker file that calls serve(), e.g. src/worker.ts`,
    );
  }
  const outdir = resolve(cwd, options.outdir ?? 'dist');
  const name = basename(entry, extname(entry));
  const extras = extraEntryPoints();
  const clash = extras.find((extra) => extra.out === name);
  if (clash) {
    throw new ServerlessWorkerError(
      'SW_BUILD_FAILED',
      `Entry file ${options.entry} would be written over the runtime's own ${clash.out}.js; rename the entry file`,
    );
  }
  // First, so that a package.json of another type stops the build before anything is written.
  await mkdir(outdir, { recursive: true });
  const packageJson = await writeModulePackageJson(outdir);
  const esbuild = await import('esbuild');
  const sourcemap = options.sourcemap ?? true;
  const minify = options.minify ?? true;
  const splitting = options.splitting ?? false;
  let result: import('esbuild').BuildResult<{ metafile: true; write: true }>;
  try {
    result = await esbuild.build({
      absWorkingDir: cwd,
      entryPoints: [{ in: entry, out: name }, ...extras],
      external: missingOptionalPeers(entry),
      outdir,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: BUNDLE_TARGET,
      banner: { js: CREATE_REQUIRE_BANNER },
      sourcemap: sourcemap ? 'linked' : false,
      sourcesContent: true,
      minify,
      splitting,
      chunkNames: 'chunks/[name]-[hash]',
      // The PostgreSQL migrations as text inside the bundle (build/sql-migrations-plugin.ts).
      // A chunk of a CommonJS package would export only `default` (build/commonjs-dynamic-import.ts);
      // the one-file bundle inlines esbuild's interop, which gives every name already.
      plugins: [sqlMigrationsPlugin(PACKAGE_SOURCE_ROOT), ...(splitting ? [commonJsDynamicImportPlugin()] : [])],
      // Error names (error_type in a job's error) and pino's serializers read
      // constructor and function names: keep them through minification.
      keepNames: true,
      metafile: true,
      write: true,
      logLevel: 'silent',
    });
  } catch (error) {
    const failure = error as { errors?: import('esbuild').Message[] };
    const messages = (failure.errors ?? []).map((message) => {
      const where = message.location ? `${message.location.file}:${message.location.line}:${message.location.column}: ` : '';
      return `${where}${message.text}`;
    });
    throw new ServerlessWorkerError('SW_BUILD_FAILED', `esbuild could not bundle ${options.entry}: ${messages.join('; ') || (error as Error).message}`);
  }
  const files = Object.entries(result.metafile.outputs).map(([path, output]) => ({ path: resolve(cwd, path), bytes: output.bytes }));
  if (sourcemap && !options.fullSourceMap)
    await reduceSourceMaps(
      files,
      [SDK_SOURCE_ROOT, PACKAGE_SOURCE_ROOT].flatMap((root) => ['src', 'dist'].map((folder) => join(root, '..', folder))),
    );
  if (packageJson) files.push(packageJson);
  // The dashboard's page and vendor files, for --serve-api's /ui (build/dashboard-assets.ts).
  try {
    files.push(...(await copyDashboardAssets(outdir)));
  } catch (error) {
    throw new ServerlessWorkerError('SW_BUILD_FAILED', `Could not copy the dashboard's files beside the bundle into ${outdir}: ${(error as Error).message}`);
  }
  return { bundle: join(outdir, `${name}.js`), files };
}

/** One line per file written, relative to `cwd` (the dashboard's folder as one line), for the command's output. */
export function describeOutput(output: BundleOutput, cwd: string = process.cwd()): string {
  const folder = join(dirname(output.bundle), BUNDLED_UI_FOLDER);
  const dashboard = output.files.filter((file) => file.path.startsWith(`${folder}${sep}`));
  const lines = output.files.filter((file) => !dashboard.includes(file)).map((file) => `  ${relative(cwd, file.path)}  ${(file.bytes / 1024).toFixed(1)} KiB`);
  if (dashboard.length > 0) {
    const bytes = dashboard.reduce((sum, file) => sum + file.bytes, 0);
    lines.push(`  ${relative(cwd, folder)}/  ${(bytes / 1024).toFixed(1)} KiB in ${dashboard.length} files (the dashboard at /ui with --serve-api)`);
  }
  return `${lines.join('\n')}\nRun it with: node --enable-source-maps ${relative(cwd, output.bundle)}`;
}
