/**
 * @module test/bundle/bundle-workers
 * Bundles fixture workers the way a worker author's image would: esbuild with its
 * ordinary flags for Node ESM (`--bundle --platform=node --format=esm`) and the usual
 * `createRequire` banner for CommonJS dependencies, into a folder outside the
 * repository (no node_modules, no package.json of ours reachable from it).
 *
 * Module files the package starts at run time by a URL beside its own module (the
 * watchdog thread) are second entry points, emitted beside the bundle under the names the
 * runtime asks for: the same list `serverless-worker build` uses (EXTRA_ENTRY_POINTS,
 * which test/build keeps complete).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Metafile } from 'esbuild';
import { EXTRA_ENTRY_POINTS } from '../../packages/platform/src/build/extra-entry-points.js';

export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The banner esbuild users add for CommonJS dependencies in an ESM bundle. */
export const CREATE_REQUIRE_BANNER = "import { createRequire as __swCreateRequire } from 'node:module'; const require = __swCreateRequire(import.meta.url);";

/** The src/ files the package starts at run time beside its own module, with their output names. */
export function runtimeModuleFiles(): Array<{ in: string; out: string }> {
  return EXTRA_ENTRY_POINTS.map((entry) => ({ in: join(REPO_ROOT, 'src', `${entry.source}.ts`), out: entry.out }));
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
  const entryPoints = [...fixtures.map((file) => ({ in: file, out: basename(file).replace(/\.ts$/, '') })), ...runtimeModuleFiles()];
  const result = await build({
    entryPoints,
    outdir: dir,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node22.12',
    banner: { js: CREATE_REQUIRE_BANNER },
    sourcemap: true,
    metafile: true,
    logLevel: 'silent',
    absWorkingDir: REPO_ROOT,
  });
  const files = new Map(fixtures.map((file) => [basename(file).replace(/\.ts$/, ''), join(dir, `${basename(file).replace(/\.ts$/, '')}.js`)]));
  return { dir, files, metafile: result.metafile };
}
