/**
 * @module build/bundle-output
 * What `serverless-worker build` does to esbuild's output once written: the source maps
 * reduced to the author's code (build/source-map.ts), and the `{"type":"module"}`
 * package.json beside the bundle that makes Node read its `.js` files as ESM.
 */
import { readFile, rm, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, join, resolve, sep } from 'node:path';
import { ServerlessWorkerError } from 'serverless-worker/internal';
import { isAuthorSource, keepSources } from './source-map.js';
const { existsSync } = process.getBuiltinModule('node:fs');

export interface WrittenFile {
  path: string;
  bytes: number;
}

/**
 * The sources a worker's map keeps: the author's files, that is neither a dependency
 * (`node_modules`) nor this package's own code (`packageFolders`: its src/ and dist/,
 * for a clone where the package is not under node_modules). Map sources are relative
 * to the map's folder.
 */
export function authorSourceFilter(mapFile: string, packageFolders: readonly string[]): (source: string) => boolean {
  const folder = dirname(mapFile);
  const prefixes = packageFolders.map((root) => (root.endsWith(sep) ? root : `${root}${sep}`));
  return (source) => {
    const path = resolve(folder, source);
    return isAuthorSource(path) && !prefixes.some((prefix) => path.startsWith(prefix));
  };
}

/**
 * Rewrite each `.map` among `files` to keep only the author's sources. A map left with
 * none (a chunk or thread file of dependencies and runtime code only) is deleted with the
 * `sourceMappingURL` comment of its file: `--enable-source-maps` otherwise reads it and
 * measures every line of that file at load, for a map that maps nothing (about 4 ms of a
 * split bundle's start). `files` is updated in place.
 */
export async function reduceSourceMaps(files: WrittenFile[], packageFolders: readonly string[]): Promise<void> {
  for (const file of [...files]) {
    if (!file.path.endsWith('.map')) continue;
    try {
      const reduced = keepSources(JSON.parse(await readFile(file.path, 'utf8')) as unknown, authorSourceFilter(file.path, packageFolders));
      if (reduced.sources.length > 0) {
        await writeFile(file.path, JSON.stringify(reduced));
        file.bytes = (await stat(file.path)).size;
        continue;
      }
      await rm(file.path);
      files.splice(files.indexOf(file), 1);
      const code = files.find((other) => other.path === file.path.slice(0, -'.map'.length));
      if (code) code.bytes = await dropSourceMapComment(code.path, basename(file.path));
    } catch (error) {
      throw new ServerlessWorkerError(
        'SW_BUILD_FAILED',
        `Could not reduce the source map ${file.path} to the worker's own sources: ${(error as Error).message}; --full-source-map keeps esbuild's map as it is`,
      );
    }
  }
}

/** Remove the trailing `//# sourceMappingURL=<mapName>` line of `path`; answers the file's new size. */
async function dropSourceMapComment(path: string, mapName: string): Promise<number> {
  const text = await readFile(path, 'utf8');
  const comment = `//# sourceMappingURL=${mapName}`;
  const at = text.lastIndexOf(comment);
  const kept = at >= 0 && text.slice(at + comment.length).trim() === '' ? text.slice(0, at) : text;
  if (kept !== text) await writeFile(path, kept);
  return Buffer.byteLength(kept);
}

/**
 * Write `<outdir>/package.json` = `{"type":"module"}`: without it Node reads the bundle's
 * `.js` as CommonJS first, fails, and parses it again as ESM (module-type detection),
 * which costs a second parse at every start and, under a package.json that names no
 * type (an image's app folder), prints a MODULE_TYPELESS_PACKAGE_JSON warning. Left alone
 * when one saying `"type": "module"` is there; answers the file, or undefined when
 * nothing was written.
 * @throws ServerlessWorkerError SW_BUILD_FAILED when a package.json there says otherwise.
 */
export async function writeModulePackageJson(outdir: string): Promise<WrittenFile | undefined> {
  const path = join(outdir, 'package.json');
  if (existsSync(path)) {
    let type: unknown;
    try {
      type = (JSON.parse(await readFile(path, 'utf8')) as { type?: unknown }).type;
    } catch (error) {
      throw new ServerlessWorkerError(
        'SW_BUILD_FAILED',
        `${path} is not JSON (${(error as Error).message}); expected {"type":"module"} beside the bundle, or an outdir without a package.json`,
      );
    }
    if (type === 'module') return undefined;
    throw new ServerlessWorkerError(
      'SW_BUILD_FAILED',
      `${path} has "type": ${JSON.stringify(type ?? null)}, so Node would read the ESM bundle beside it as CommonJS; expected "type": "module" there, or an outdir of its own (e.g. --outdir dist)`,
    );
  }
  const text = '{"type":"module"}\n';
  await writeFile(path, text);
  return { path, bytes: Buffer.byteLength(text) };
}
