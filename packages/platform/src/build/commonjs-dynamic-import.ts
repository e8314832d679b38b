/**
 * @module build/commonjs-dynamic-import
 * An esbuild plugin for split bundles: `await import('prom-client')` of a CommonJS
 * package gives the same namespace in a chunk as Node gives unbundled.
 *
 * Why: with `splitting`, esbuild makes each `import()` target a chunk of its own, and a
 * CommonJS module's chunk can only say `export default require_x()`: ESM output has no
 * run-time export names, and the importer's `import("./chunks/x.js")` is not wrapped in
 * esbuild's interop (esbuild issues #3245, #4377). So `const { Registry } = await
 * import('prom-client')` reads `undefined` and `new Registry()` throws "is not a
 * constructor"; the one-file bundle inlines `__toESM(require_x())` and works.
 *
 * The fix, for every package alike: a dynamic import whose target Node would read as
 * CommonJS is pointed at a small ESM module that requires it and exports it as Node's
 * own loader does: `default` is `module.exports`, and each name that cjs-module-lexer
 * (the lexer Node itself uses for this) finds in it, following `module.exports =
 * require(...)` re-exports, is a named export. Names are fixed at build time, so the
 * chunk's namespace is static ESM. ESM targets are left to esbuild.
 */
import { createRequire } from 'node:module';
import { dirname, extname, isAbsolute, join } from 'node:path';
import { parse } from 'cjs-module-lexer';
import type { Plugin } from 'esbuild';
const { existsSync, readFileSync } = process.getBuiltinModule('node:fs');

/** The esbuild namespace of the generated modules. */
const NAMESPACE = 'serverless-worker-commonjs';

/** Marks the plugin's own resolve call, so that it does not come back to the plugin. */
interface ResolveData {
  readonly commonJsPlugin?: true;
}

interface LoadData {
  readonly names: readonly string[];
}

/** The `type` of the package.json nearest to `file`; undefined when there is none or it says nothing. */
function packageType(file: string): unknown {
  for (let dir = dirname(file); ; dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest)) {
      try {
        return (JSON.parse(readFileSync(manifest, 'utf8')) as { type?: unknown }).type;
      } catch {
        return undefined;
      }
    }
    if (dirname(dir) === dir) return undefined;
  }
}

/**
 * The export names Node's ESM loader gives `file` when it loads it as CommonJS, or
 * undefined when Node (and esbuild) would read it as ESM: a `.mjs` file, a `.js` one
 * under `"type": "module"`, or a `.js` one with import/export syntax (Node's module
 * syntax detection; the lexer stops on it). `seen` guards re-export cycles.
 */
export function commonJsExportNames(file: string, seen: Set<string> = new Set()): string[] | undefined {
  const ext = extname(file);
  if (ext !== '.js' && ext !== '.cjs') return undefined;
  if (ext === '.js' && packageType(file) === 'module') return undefined;
  let found: { exports: string[]; reexports: string[] };
  try {
    found = parse(readFileSync(file, 'utf8'), file);
  } catch {
    // A `.cjs` file the lexer cannot read: Node gives it `default` alone, and so do we.
    return ext === '.cjs' ? [] : undefined;
  }
  seen.add(file);
  const names = new Set(found.exports);
  const require = createRequire(file);
  for (const specifier of found.reexports) {
    let target: string;
    try {
      target = require.resolve(specifier);
    } catch {
      continue; // Node skips a re-export it cannot resolve too
    }
    if (!isAbsolute(target) || seen.has(target)) continue;
    for (const name of commonJsExportNames(target, seen) ?? []) names.add(name);
  }
  // `default` is module.exports itself, as in Node.
  names.delete('default');
  return [...names];
}

/** The ESM module that stands for the CommonJS module at `file` in a dynamic import. */
export function commonJsFacade(file: string, names: readonly string[]): string {
  const lines = [
    `const m = require(${JSON.stringify(file)});`,
    // Own properties only, as Node reads them once the module has run.
    'const own = (name) => (Object.prototype.hasOwnProperty.call(m, name) ? m[name] : undefined);',
    'export default m;',
  ];
  names.forEach((name, index) => lines.push(`const n${index} = own(${JSON.stringify(name)});`, `export { n${index} as ${JSON.stringify(name)} };`));
  return `${lines.join('\n')}\n`;
}

/** The plugin: only `import()` is touched; static imports and `require` keep esbuild's interop, which works. */
export function commonJsDynamicImportPlugin(): Plugin {
  return {
    name: 'serverless-worker-commonjs-dynamic-import',
    setup(build) {
      build.onResolve({ filter: /.*/ }, async (args) => {
        if (args.kind !== 'dynamic-import' || (args.pluginData as ResolveData | undefined)?.commonJsPlugin) return undefined;
        const resolved = await build.resolve(args.path, {
          kind: args.kind,
          importer: args.importer,
          namespace: args.namespace,
          resolveDir: args.resolveDir,
          pluginData: { commonJsPlugin: true } satisfies ResolveData,
        });
        // Errors, externals and other plugins' modules: esbuild's own resolution reports or handles them.
        if (resolved.errors.length > 0 || resolved.external || resolved.namespace !== 'file') return undefined;
        const names = commonJsExportNames(resolved.path);
        if (!names) return undefined;
        return { path: resolved.path, namespace: NAMESPACE, pluginData: { names } satisfies LoadData };
      });
      build.onLoad({ filter: /.*/, namespace: NAMESPACE }, (args) => ({
        contents: commonJsFacade(args.path, (args.pluginData as LoadData).names),
        resolveDir: dirname(args.path),
        loader: 'js',
      }));
    },
  };
}
