/**
 * @module transports/watchdog/thread-file
 * Where the watchdog thread's program file is, in each way the package runs.
 */
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
const { existsSync } = process.getBuiltinModule('node:fs');

/**
 * The watchdog thread's program: the source entry, and the file name looked for at run
 * time. The file is resolved BESIDE THE MODULE THAT STARTS IT (`new URL('./' + name +
 * ext, import.meta.url)` of watchdog.ts), trying the extensions in order:
 * - dist/ (tsc -p tsconfig.build.json): `dist/transports/watchdog/watchdog-thread.js`
 *   beside `watchdog.js`;
 * - an esbuild bundle (ESM, so that import.meta.url is the bundle's own URL): emit
 *   `entry` as a second entry point named `watchdog-thread` into the SAME folder as
 *   the bundle, e.g. `esbuild worker.ts src/transports/watchdog/watchdog-thread.ts
 *   --bundle --format=esm --platform=node --outdir=out --entry-names=[name]` gives
 *   `out/worker.js` and `out/watchdog-thread.js` (`.mjs` is found too). With esbuild's
 *   `splitting` (`serverless-worker build --splitting`) this module lands in a chunk
 *   under `out/chunks/`, where nothing is emitted: the file is then looked for beside
 *   the main script too (`process.argv[1]`, the bundle the image runs);
 * - under tsx or vitest from src/: `src/transports/watchdog/watchdog-thread.ts`, started
 *   with tsx's loader registered in the thread first; or, where SW_DEV_WATCHDOG_THREAD
 *   names a compiled copy of it (a JavaScript file that exists), that copy. tsx in a new
 *   thread cost about 0.45 s of CPU a start against 0.07 s for the compiled file, and this
 *   repository's tests start the thread hundreds of times from src/ (they set it to the
 *   thread their compiled fixtures run with). Only a source run reads it: dist/ and a
 *   bundle start the file beside them.
 * When none is there, the worker runs without the watchdog (and without the off-thread
 * heartbeat) and says so in its log.
 */
/**
 * The SDK's source folder: src/ in the repository (run through tsx), dist/ where installed.
 * The platform's bundler starts the SDK's extra entry points (the watchdog thread) from here.
 */
export const SDK_SOURCE_ROOT = fileURLToPath(new URL('../../', import.meta.url));

export const WATCHDOG_THREAD_FILE = Object.freeze({
  /** The source file, relative to the package root: the second entry point of a bundle. */
  entry: 'src/transports/watchdog/watchdog-thread.ts',
  /** The emitted file's name without extension. */
  name: 'watchdog-thread',
  /** Extensions tried, in order. */
  extensions: ['.js', '.mjs', '.ts'],
} as const);

/** A compiled watchdog thread to start in place of the TypeScript source (see the module's note). */
export const DEV_WATCHDOG_THREAD_ENV = 'SW_DEV_WATCHDOG_THREAD';

/** The thread file found, and how to start it. */
export interface ThreadFile {
  readonly url: URL;
  /**
   * For a TypeScript file: the code of an eval'd worker that registers tsx's loader in
   * the thread and then imports the file (Node 20 applies no `--import` loader of a
   * worker's execArgv to the worker's own entry).
   */
  readonly bootstrap?: string;
}

/** The folders looked in, in order: beside `base`, then beside the main script (a split bundle's entry). */
function threadFileBases(base: string | URL, mainScript: string | undefined): (string | URL)[] {
  const bases: (string | URL)[] = [base];
  if (mainScript !== undefined && mainScript !== '') bases.push(pathToFileURL(resolve(mainScript)));
  return bases;
}

/**
 * The thread file beside `base` (default: this module), else beside `mainScript`
 * (default: `process.argv[1]`), or undefined when none is there. `env` is read for
 * SW_DEV_WATCHDOG_THREAD when the file found is the TypeScript source.
 */
export function resolveThreadFile(
  base: string | URL = import.meta.url,
  mainScript: string | undefined = process.argv[1],
  env: NodeJS.ProcessEnv = process.env,
): ThreadFile | undefined {
  for (const folder of threadFileBases(base, mainScript)) {
    const found = threadFileBeside(folder, env);
    if (found) return found;
  }
  return undefined;
}

function threadFileBeside(base: string | URL, env: NodeJS.ProcessEnv): ThreadFile | undefined {
  for (const extension of WATCHDOG_THREAD_FILE.extensions) {
    const url = new URL(`./${WATCHDOG_THREAD_FILE.name}${extension}`, base);
    if (!existsSync(url)) continue;
    if (extension !== '.ts') return { url };
    // The source: a compiled copy where one is named (and there), else the source through tsx.
    const compiled = env[DEV_WATCHDOG_THREAD_ENV];
    if (compiled !== undefined && /\.m?js$/.test(compiled) && existsSync(compiled)) return { url: pathToFileURL(resolve(compiled)) };
    // TypeScript: tsx is there wherever the sources run (a dev dependency).
    try {
      const api = createRequire(base)
        .resolve('tsx/package.json')
        .replace(/package\.json$/, 'dist/esm/api/index.mjs');
      if (!existsSync(api)) return undefined;
      const bootstrap = `import(${JSON.stringify(pathToFileURL(api).href)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(url.href)}); });`;
      return { url, bootstrap };
    } catch {
      return undefined;
    }
  }
  return undefined;
}
