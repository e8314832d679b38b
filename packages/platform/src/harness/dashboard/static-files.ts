/**
 * @module harness/dashboard/static-files
 * The dashboard's files: the page and its modules, and the browser builds of Preact,
 * htm and uPlot (no CDN: the page works offline). Two places hold them:
 *
 * - beside a bundle (`serverless-worker build` copies them to `<outdir>/sw-dashboard/`,
 *   the vendor files under its `vendor/`): looked for first, beside the module that
 *   runs (the bundle, or its `chunks/` with --splitting);
 * - the package itself (in src/ and in dist/ alike): its `ui/` folder, and the vendor
 *   files from node_modules.
 *
 * Files are read on first request and kept in memory; only names in the folder's flat
 * listing and the fixed vendor table are served. When neither place has the page, the
 * page answers SW_DASHBOARD_UNAVAILABLE naming the folders looked in.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ServerlessWorkerError } from 'serverless-worker/internal';
const { existsSync } = process.getBuiltinModule('node:fs');

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

/** The package's `ui/` folder: three levels up from this file, in src/ and in dist/ alike. */
export const UI_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'ui');

/** The folder `serverless-worker build` writes beside a bundle (pages, and vendor files in `vendor/`). */
export const BUNDLED_UI_FOLDER = 'sw-dashboard';

/** Names of the page's files that are served (and copied beside a bundle). */
export const PAGE_FILE_NAME = /^[a-z0-9][a-z0-9-]*\.(html|js|css|svg|png)$/;

const require = createRequire(import.meta.url);

/** Vendor files by the name the page imports them as: [package entry to resolve, path from its folder]. */
export const VENDOR_FILES: Readonly<Record<string, readonly [string, string]>> = {
  'preact.mjs': ['preact/package.json', 'dist/preact.mjs'],
  'hooks.mjs': ['preact/package.json', 'hooks/dist/hooks.mjs'],
  'htm.mjs': ['htm', 'htm.mjs'],
  'uplot.mjs': ['uplot/package.json', 'dist/uPlot.esm.js'],
  'uplot.css': ['uplot/package.json', 'dist/uPlot.min.css'],
};

/** Where a vendor file lies in the package's node_modules (throws when the package is not installed). */
export function packageVendorPath(name: string): string {
  const entry = VENDOR_FILES[name];
  if (!entry) throw new RangeError(`${name} is not a dashboard vendor file (expected one of ${Object.keys(VENDOR_FILES).join(', ')})`);
  return join(dirname(require.resolve(entry[0])), entry[1]);
}

/** Folders a bundle's copy may be in: beside the running module, or one up (a --splitting chunk). */
export function bundledUiCandidates(moduleUrl: string = import.meta.url): string[] {
  const here = dirname(fileURLToPath(moduleUrl));
  return [join(here, BUNDLED_UI_FOLDER), join(here, '..', BUNDLED_UI_FOLDER)];
}

export interface StaticFile {
  readonly body: Buffer;
  readonly contentType: string;
}

/** Where the files come from: a bundle's copy (vendor files inside it) or the package. */
export interface UiSource {
  readonly dir: string;
  readonly bundled: boolean;
}

function contentType(name: string): string | undefined {
  const dot = name.lastIndexOf('.');
  return dot < 0 ? undefined : CONTENT_TYPES[name.slice(dot)];
}

/** The first folder holding index.html: a bundle's copy, then the package's `ui/`. */
export function locateUi(bundled: readonly string[] = bundledUiCandidates(), packageDir: string = UI_DIR): UiSource | undefined {
  const copy = bundled.find((dir) => existsSync(join(dir, 'index.html')));
  if (copy !== undefined) return { dir: copy, bundled: true };
  return existsSync(join(packageDir, 'index.html')) ? { dir: packageDir, bundled: false } : undefined;
}

export class StaticFiles {
  readonly #cache = new Map<string, StaticFile>();
  readonly #source: UiSource | undefined;
  readonly #lookedIn: readonly string[];

  /** `source`: where the files are; default the first of a bundle's copy and the package's `ui/`. */
  constructor(source?: UiSource) {
    this.#source = source ?? locateUi();
    this.#lookedIn = source ? [source.dir] : [...bundledUiCandidates(), UI_DIR];
  }

  /** Where the files come from, or undefined when no folder holds the page. */
  get source(): UiSource | undefined {
    return this.#source;
  }

  /**
   * A file of the page's folder (flat names only), or undefined. Throws
   * SW_DASHBOARD_UNAVAILABLE when the dashboard's files are nowhere.
   */
  async page(name: string): Promise<StaticFile | undefined> {
    const source = this.#available();
    if (!PAGE_FILE_NAME.test(name)) return undefined;
    return this.#load(`ui:${name}`, () => join(source.dir, name), name);
  }

  /** A vendor module by its served name, or undefined. */
  async vendor(name: string): Promise<StaticFile | undefined> {
    const source = this.#available();
    if (!VENDOR_FILES[name]) return undefined;
    return this.#load(`vendor:${name}`, () => (source.bundled ? join(source.dir, 'vendor', name) : packageVendorPath(name)), name);
  }

  #available(): UiSource {
    if (this.#source) return this.#source;
    throw new ServerlessWorkerError(
      'SW_DASHBOARD_UNAVAILABLE',
      `The dashboard's files are not here: no index.html in ${this.#lookedIn.join(', ')}; expected the package's ui/ folder, or the ${BUNDLED_UI_FOLDER}/ folder that serverless-worker build writes beside a bundle (copy it along with the bundle)`,
      { lookedIn: [...this.#lookedIn] },
    );
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
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'MODULE_NOT_FOUND') return undefined;
      throw error;
    }
  }
}
