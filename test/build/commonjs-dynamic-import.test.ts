/**
 * `import()` of a CommonJS package inside a split bundle gives what Node gives
 * unbundled (build/commonjs-dynamic-import.ts): a program that imports packages of each
 * kind prints the same line run by node from its folder, bundled as one file, and split.
 * The packages are written here: CommonJS with names set on `exports` and a re-export
 * (`module.exports = require(...)`), a transpiled one flagged `__esModule`, a `.cjs`
 * file, and ESM (`"type": "module"`, and a typeless `.js` with import/export syntax),
 * which the plugin leaves to esbuild.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleWorker } from '../../packages/platform/src/build/bundle.js';
import { commonJsExportNames } from '../../packages/platform/src/build/commonjs-dynamic-import.js';

let dir: string;

/** Package name -> its files. */
const PACKAGES: Record<string, Record<string, string>> = {
  'cjs-reexport': {
    'package.json': '{"name":"cjs-reexport","main":"index.js"}',
    'index.js': "module.exports = require('./lib/impl.js');",
    'lib/impl.js':
      'class Counter { constructor(n) { this.n = n; } }\nexports.Counter = Counter;\nexports.greet = (who) => `hello ${who}`;\nmodule.exports.version = 3;',
  },
  'cjs-transpiled': {
    'package.json': '{"name":"cjs-transpiled","main":"index.js"}',
    'index.js':
      'Object.defineProperty(exports, "__esModule", { value: true });\nexports.default = function main() { return "main"; };\nexports.named = "named";',
  },
  'cjs-ext': {
    'package.json': '{"name":"cjs-ext","type":"module","exports":"./index.cjs"}',
    'index.cjs': 'module.exports = { fromCjs: true };\nmodule.exports.extra = 1;',
  },
  'esm-typed': {
    'package.json': '{"name":"esm-typed","type":"module","exports":"./index.js"}',
    'index.js': "export const kind = 'esm';\nexport default 'esm default';",
  },
  'esm-syntax': {
    'package.json': '{"name":"esm-syntax","main":"index.js"}',
    'index.js': "export const detected = true;\nexport default 'detected default';",
  },
};

/** Prints, as JSON, what each dynamic import gives: the names and what the program reads from them. */
const PROGRAM = `
const reexport = await import('cjs-reexport');
const transpiled = await import('cjs-transpiled');
const ext = await import('cjs-ext');
const typed = await import('esm-typed');
const syntax = await import('esm-syntax');
// Node lists \`__esModule\` (esbuild's one-file interop does not) and, from Node 23 on, \`module.exports\`: neither is read by code.
const names = (ns) => Object.keys(ns).filter((name) => name !== '__esModule' && name !== 'module.exports').sort();
console.log(JSON.stringify({
  reexport: { names: names(reexport), count: new reexport.Counter(2).n, greet: reexport.greet('bundle'), version: reexport.version, same: reexport.default.Counter === reexport.Counter },
  transpiled: { names: names(transpiled), named: transpiled.named, defaultIsExports: transpiled.default.named === 'named' },
  ext: { names: names(ext), extra: ext.extra, fromCjs: ext.default.fromCjs },
  typed: { names: names(typed), kind: typed.kind, default: typed.default },
  syntax: { names: names(syntax), detected: syntax.detected, default: syntax.default },
}));
`;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sw-cjs-import-'));
  for (const [name, files] of Object.entries(PACKAGES)) {
    for (const [file, text] of Object.entries(files)) {
      const path = join(dir, 'node_modules', name, file);
      await mkdir(join(path, '..'), { recursive: true });
      await writeFile(path, text);
    }
  }
  await writeFile(join(dir, 'program.mjs'), PROGRAM);
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function printed(file: string): Promise<unknown> {
  const run = await execa(process.execPath, [file], { cwd: join(file, '..'), reject: false, timeout: 60_000 });
  expect(run.exitCode, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as unknown;
}

describe('import() of a CommonJS package in a bundle', { timeout: 120_000 }, () => {
  it('finds the names Node finds: set on exports, re-exported, not `default`; none for ESM files', () => {
    const modules = join(dir, 'node_modules');
    expect(commonJsExportNames(join(modules, 'cjs-reexport/index.js'))?.sort()).toEqual(['Counter', 'greet', 'version']);
    expect(commonJsExportNames(join(modules, 'cjs-transpiled/index.js'))?.sort()).toEqual(['__esModule', 'named']);
    expect(commonJsExportNames(join(modules, 'cjs-ext/index.cjs'))?.sort()).toEqual(['extra', 'fromCjs']);
    expect(commonJsExportNames(join(modules, 'esm-typed/index.js'))).toBeUndefined();
    expect(commonJsExportNames(join(modules, 'esm-syntax/index.js'))).toBeUndefined();
  });

  it('gives the same namespaces unbundled, as one file and split into chunks', async () => {
    const node = await printed(join(dir, 'program.mjs'));
    // What Node gives (the reference): named exports and `default` = module.exports.
    expect(node).toMatchObject({
      reexport: { count: 2, greet: 'hello bundle', version: 3, same: true },
      transpiled: { named: 'named', defaultIsExports: true },
      ext: { extra: 1, fromCjs: true },
      typed: { kind: 'esm', default: 'esm default' },
      syntax: { detected: true, default: 'detected default' },
    });
    for (const splitting of [false, true]) {
      const output = await bundleWorker({ entry: 'program.mjs', outdir: join(dir, splitting ? 'split' : 'whole'), splitting, cwd: dir });
      expect(await printed(output.bundle), splitting ? 'split' : 'one file').toEqual(node);
    }
  });
});
