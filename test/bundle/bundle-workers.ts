/**
 * @module test/bundle/bundle-workers
 * Bundles fixture workers the way a worker author's image would: esbuild with its
 * ordinary flags for Node ESM (`--bundle --platform=node --format=esm`) and the usual
 * `createRequire` banner for CommonJS dependencies, into a folder outside the
 * repository (no node_modules, no package.json of ours reachable from it).
 *
 * Rule for module files the package starts at run time (a worker thread started with
 * `new Worker(new URL('./name.js', import.meta.url))`): each such file is a second
 * entry point, emitted beside the bundle under its own base name, so that the URL,
 * resolved against the bundle, finds it. The files are found by scanning src/ for
 * `new URL('./name.js', import.meta.url)` and by name: every file under src/ named
 * `<name>-thread.ts` (a worker thread's program, e.g. the watchdog thread, whose URL is
 * built from parts).
 */
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Metafile } from 'esbuild';

export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The banner esbuild users add for CommonJS dependencies in an ESM bundle. */
export const CREATE_REQUIRE_BANNER =
  "import { createRequire as __swCreateRequire } from 'node:module'; const require = __swCreateRequire(import.meta.url);";

const MODULE_URL = /new\s+URL\(\s*['"]\.\/([\w.-]+)\.js['"]\s*,\s*import\.meta\.url\s*\)/g;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** The src/ files the package loads at run time by a URL relative to its own module (worker-thread entries). */
export function runtimeModuleFiles(): string[] {
  const found = new Set<string>();
  for (const file of sourceFiles(join(REPO_ROOT, 'src'))) {
    if (file.endsWith('-thread.ts')) found.add(file);
    for (const match of readFileSync(file, 'utf8').matchAll(MODULE_URL)) found.add(join(dirname(file), `${match[1]}.ts`));
  }
  return [...found].sort();
}

export interface BundledWorkers {
  /** The folder holding the bundles (outside the repository). */
  readonly dir: string;
  /** Bundle path by fixture base name without extension (`platform-worker` -> `<dir>/platform-worker.js`). */
  readonly files: ReadonlyMap<string, string>;
  readonly metafile: Metafile;
}

/** Bundle each fixture (and each runtime module file beside it) into a new temporary folder. */
export async function bundleWorkers(fixtures: readonly string[]): Promise<BundledWorkers> {
  const dir = mkdtempSync(join(tmpdir(), 'sw-bundle-'));
  // Node reads a `.js` file as ESM only under a package.json that says so: the image's, not ours.
  writeFileSync(join(dir, 'package.json'), '{"type":"module"}\n');
  const threads = runtimeModuleFiles();
  const entryPoints = [
    ...fixtures.map((file) => ({ in: file, out: basename(file).replace(/\.ts$/, '') })),
    ...threads.map((file) => ({ in: file, out: basename(file).replace(/\.ts$/, '') })),
  ];
  const result = await build({
    entryPoints,
    outdir: dir,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    banner: { js: CREATE_REQUIRE_BANNER },
    sourcemap: true,
    metafile: true,
    logLevel: 'silent',
    absWorkingDir: REPO_ROOT,
  });
  const files = new Map(fixtures.map((file) => [basename(file).replace(/\.ts$/, ''), join(dir, `${basename(file).replace(/\.ts$/, '')}.js`)]));
  return { dir, files, metafile: result.metafile };
}
