/**
 * @module harness/http/ui/static-files
 * The dashboard's files: the page and its modules from the package's `ui/` folder,
 * and the browser builds of Preact, htm and uPlot from node_modules (no CDN: the page
 * works offline). Files are read on first request and kept in memory; only names in
 * the folder's flat listing and the fixed vendor table are served.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

/** The package's `ui/` folder: four levels up from this file, in src/ and in dist/ alike. */
export const UI_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..', 'ui');

const require = createRequire(import.meta.url);

/** Vendor files by the name the page imports them as: [package entry to resolve, path from its folder]. */
const VENDOR: Readonly<Record<string, readonly [string, string]>> = {
  'preact.mjs': ['preact/package.json', 'dist/preact.mjs'],
  'hooks.mjs': ['preact/package.json', 'hooks/dist/hooks.mjs'],
  'htm.mjs': ['htm', 'htm.mjs'],
  'uplot.mjs': ['uplot/package.json', 'dist/uPlot.esm.js'],
  'uplot.css': ['uplot/package.json', 'dist/uPlot.min.css'],
};

export interface StaticFile {
  readonly body: Buffer;
  readonly contentType: string;
}

function contentType(name: string): string | undefined {
  const dot = name.lastIndexOf('.');
  return dot < 0 ? undefined : CONTENT_TYPES[name.slice(dot)];
}

export class StaticFiles {
  readonly #cache = new Map<string, StaticFile>();
  readonly #uiDir: string;

  constructor(uiDir: string = UI_DIR) {
    this.#uiDir = uiDir;
  }

  /** A file of the `ui/` folder (flat names only), or undefined. */
  async page(name: string): Promise<StaticFile | undefined> {
    if (!/^[a-z0-9][a-z0-9-]*\.(html|js|css|svg|png)$/.test(name)) return undefined;
    return this.#load(`ui:${name}`, () => join(this.#uiDir, name), name);
  }

  /** A vendor module by its served name, or undefined. */
  async vendor(name: string): Promise<StaticFile | undefined> {
    const entry = VENDOR[name];
    if (!entry) return undefined;
    const [spec, path] = entry;
    return this.#load(`vendor:${name}`, () => join(dirname(require.resolve(spec)), path), name);
  }

  async #load(key: string, locate: () => string, name: string): Promise<StaticFile | undefined> {
    const cached = this.#cache.get(key);
    if (cached) return cached;
    const type = contentType(name);
    if (type === undefined) return undefined;
    try {
      const file = { body: await readFile(locate()), contentType: type };
      this.#cache.set(key, file);
      return file;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  }
}
