// Compiles one TypeScript fixture for test/compiled-fixtures.ts: run as
// `node test/setup/bundle-fixture.mjs <request JSON>` (a plain Node script, so that it
// starts without tsx). The request: { entry, outdir, extraEntries: [{ in, out }] }.
// esbuild bundles the entry's own modules (src/, packages/platform/src, test/; package
// names resolved through tsconfig.json's paths) into `<outdir>/<entry name>.js`, leaves
// every installed package as an import (resolved at run time from the repository's
// node_modules, as under tsx), and emits each extra entry (the watchdog thread) beside it,
// as `serverless-worker build` does (with --splitting: code loaded by import() in chunks/,
// so that it loads when asked, as from the sources). `import.meta.url` in a bundled module is rewritten to
// that module's source URL, so that files read beside a module (migrations, templates,
// the dashboard) are found where they are under tsx; the one exception is the watchdog
// thread's default lookup, which must look beside the bundle. A source map goes beside
// the bundle (the child runs with --enable-source-maps). It prints the bundle's
// input files (JSON) on stdout.
import { readFile } from 'node:fs/promises';
import { basename, dirname, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build, transform } from 'esbuild';

const REPO_ROOT = resolve(import.meta.dirname, '../..');

/** Package names of this repository, resolved through tsconfig.json's paths; any other package name stays an import. */
const OWN_PACKAGE = /^serverless-worker(-platform)?(\/|$)/;

/** The watchdog thread is looked for beside the module that starts it: in a bundle, the bundle (where the thread file is emitted). */
const KEEP_BUNDLE_URL = new Map([['src/transports/watchdog/thread-file.ts', 'base: string | URL = import.meta.url']]);

/** A name that stands for the kept `import.meta.url` through the transform. */
const KEPT = '__swKeptImportMetaUrl';

const sourceUrls = {
  name: 'source-import-meta-url',
  setup(esbuild) {
    esbuild.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.path.startsWith('node:') || OWN_PACKAGE.test(args.path)) return undefined;
      return { path: args.path, external: true };
    });
    esbuild.onLoad({ filter: /\.[cm]?tsx?$/ }, async (args) => {
      if (args.path.includes('/node_modules/')) return undefined;
      let text = await readFile(args.path, 'utf8');
      if (!text.includes('import.meta.url')) return { contents: text, loader: 'ts' };
      const keep = KEEP_BUNDLE_URL.get(relative(REPO_ROOT, args.path));
      if (keep !== undefined) {
        if (!text.includes(keep)) throw new Error(`${args.path} no longer holds '${keep}': update KEEP_BUNDLE_URL in test/setup/bundle-fixture.mjs`);
        text = text.replace(keep, keep.replace('import.meta.url', KEPT));
      }
      // esbuild's define replaces the expression, not the text (a string that mentions it stays).
      const { code } = await transform(text, {
        loader: 'ts',
        format: 'esm',
        target: 'node20',
        define: { 'import.meta.url': JSON.stringify(pathToFileURL(args.path).href) },
      });
      return { contents: code.replace(KEPT, 'import.meta.url'), loader: 'js', resolveDir: dirname(args.path) };
    });
  },
};

const request = JSON.parse(process.argv[2] ?? '{}');
const name = basename(request.entry).replace(/\.[cm]?ts$/, '');
const result = await build({
  entryPoints: [{ in: request.entry, out: name }, ...request.extraEntries],
  outdir: request.outdir,
  bundle: true,
  platform: 'node',
  format: 'esm',
  // import() stays lazy: what a module loads on demand (and the packages it imports) loads only when asked, as from the sources.
  splitting: true,
  chunkNames: 'chunks/[name]-[hash]',
  target: 'node20',
  tsconfig: resolve(REPO_ROOT, 'tsconfig.json'),
  absWorkingDir: REPO_ROOT,
  plugins: [sourceUrls],
  // Run with --enable-source-maps: a stack names the source files, as under tsx.
  sourcemap: true,
  sourcesContent: false,
  metafile: true,
  logLevel: 'silent',
});
process.stdout.write(
  JSON.stringify({ file: resolve(request.outdir, `${name}.js`), inputs: Object.keys(result.metafile.inputs).map((path) => resolve(REPO_ROOT, path)) }),
);
