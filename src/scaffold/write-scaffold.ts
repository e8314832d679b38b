/**
 * @module scaffold/write-scaffold
 * `serverless-worker init`: write a new worker project from templates/scaffold/ (real
 * files shipped in the package): `base/` always, `stream/` over it for the streaming
 * variant. Names starting with `dot-` become dotfiles (npm would drop or rename a
 * shipped `.gitignore`); `{{name}}` and `{{version}}` are filled in. Files that
 * exist already are refused (SW_INIT_TARGET_NOT_EMPTY) unless `force`.
 */
import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ServerlessWorkerError } from '../job/errors.js';
import { RUNTIME_VERSION } from '../version.js';
const { existsSync } = process.getBuiltinModule('node:fs');

/** templates/scaffold/ of this package: two folders up from src/scaffold or dist/scaffold. */
export const SCAFFOLD_ROOT = fileURLToPath(new URL('../../templates/scaffold/', import.meta.url));

export interface ScaffoldOptions {
  /** Folder to create the project in (made if missing). */
  dir: string;
  /** The streaming variant (an async generator handler); default false. */
  stream?: boolean;
  /** Overwrite files that exist; default false. */
  force?: boolean;
  /** package.json name; default the folder's name, made a valid npm name. */
  name?: string;
  /** Version range of serverless-worker the project depends on; default `^` this version. */
  version?: string;
}

export interface ScaffoldResult {
  readonly dir: string;
  readonly name: string;
  /** Files written, relative to `dir`, sorted. */
  readonly files: readonly string[];
}

/** A valid npm package name from a folder name: lower case, URL-safe, at most 214 characters. */
export function packageNameFor(folder: string): string {
  const name = folder
    .toLowerCase()
    .replace(/[^a-z0-9._~-]+/g, '-')
    .replace(/^[._-]+/, '')
    .replace(/-+$/, '')
    .slice(0, 214);
  return name === '' ? 'my-worker' : name;
}

async function listFiles(root: string): Promise<string[]> {
  if (!existsSync(root)) return [];
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  return entries.filter((entry) => entry.isFile()).map((entry) => relative(root, join(entry.parentPath, entry.name)).split('\\').join('/'));
}

/** Where a template file goes in the project: `dot-x` segments become `.x`. */
export function targetPath(templatePath: string): string {
  return templatePath
    .split('/')
    .map((segment) => (segment.startsWith('dot-') ? `.${segment.slice('dot-'.length)}` : segment))
    .join('/');
}

/** Write the scaffold into `options.dir`; returns what was written. */
export async function writeScaffold(options: ScaffoldOptions): Promise<ScaffoldResult> {
  const dir = resolve(options.dir);
  const name = options.name ?? packageNameFor(basename(dir));
  const version = options.version ?? `^${RUNTIME_VERSION}`;
  // Template path -> absolute source; the stream variant's files replace the base's.
  const sources = new Map<string, string>();
  for (const variant of options.stream ? ['base', 'stream'] : ['base']) {
    for (const file of await listFiles(join(SCAFFOLD_ROOT, variant))) sources.set(targetPath(file), join(SCAFFOLD_ROOT, variant, file));
  }
  if (sources.size === 0) {
    throw new ServerlessWorkerError('SW_INTERNAL', `The scaffold templates are missing from ${SCAFFOLD_ROOT}; reinstall serverless-worker`);
  }
  const files = [...sources.keys()].sort();
  const existing = files.filter((file) => existsSync(join(dir, file)));
  if (existing.length > 0 && !options.force) {
    throw new ServerlessWorkerError(
      'SW_INIT_TARGET_NOT_EMPTY',
      `${dir} already has ${existing.join(', ')}; expected a new or empty folder (or pass --force to overwrite these files)`,
      { existing },
    );
  }
  for (const file of files) {
    const text = await readFile(sources.get(file) as string, 'utf8');
    const filled = text.replaceAll('{{name}}', name).replaceAll('^{{version}}', version).replaceAll('{{version}}', version);
    await mkdir(dirname(join(dir, file)), { recursive: true });
    await writeFile(join(dir, file), filled);
  }
  return { dir, name, files };
}
