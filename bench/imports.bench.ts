/**
 * @module bench/imports
 * What each dependency costs a worker at start: a fresh `node` imports one module and
 * reports the import's wall time and how much RSS and heap it added (after a full GC),
 * against the same process before the import. Also the package's own entry points as
 * compiled JavaScript: the index (everything a worker author can import), `serve.js`
 * (what `serve()` needs before it picks a mode), `platform-mode.js` (the platform
 * path, loaded once RUNPOD_WEBHOOK_GET_JOB is set), and the harness server (fastify and
 * every route, loaded only by --serve-api and the harness).
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { REPO_ROOT } from './lib/child.js';
import { ensureCompiled } from './lib/compiled.js';
import type { BenchCase, Benchmark } from './lib/runner.js';

const MB = 1024 * 1024;

const PACKAGES = ['undici', 'zod', 'zod/mini', 'pino', 'prom-client', 'fastify', 'execa', 'p-retry', 'commander'] as const;
const OWN = {
  'package index (src/index.js)': 'src/index.js',
  'serve() (src/serve.js)': 'src/serve.js',
  'platform path (src/platform-mode.js)': 'src/platform-mode.js',
  'harness server (src/harness/server-api.js)': 'src/harness/server-api.js',
} as const;

interface ImportFigures {
  ms: number;
  rss: number;
  heap: number;
  modules: number;
}

async function measureImport(specifier: string): Promise<ImportFigures> {
  const script = [
    "const { createRequire } = await import('node:module');",
    'gc(); gc();',
    'const before = process.memoryUsage();',
    'const t = performance.now();',
    `await import(${JSON.stringify(specifier)});`,
    'const ms = performance.now() - t;',
    'gc(); gc();',
    'const after = process.memoryUsage();',
    // Modules loaded: CommonJS ones in require.cache, plus ESM ones (not listed by Node: counted as 0).
    'const modules = Object.keys(createRequire(import.meta.url).cache).length;',
    'process.stdout.write(JSON.stringify({ ms, rss: after.rss - before.rss, heap: after.heapUsed - before.heapUsed, modules }));',
  ].join(' ');
  const child = spawn(process.execPath, ['--expose-gc', '--input-type=module', '-e', script], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (data: Buffer) => (out += data.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`importing ${specifier} exited ${code}`);
  return JSON.parse(out) as ImportFigures;
}

function importCase(label: string, specifier: () => string): BenchCase {
  return {
    name: label,
    warmup: false,
    metrics: { 'import time': { unit: 'ms' }, 'RSS added': { unit: 'MB' }, 'heap added': { unit: 'MB' }, 'CommonJS modules': { unit: '' } },
    async measure() {
      const figures = await measureImport(specifier());
      return { 'import time': figures.ms, 'RSS added': figures.rss / MB, 'heap added': figures.heap / MB, 'CommonJS modules': figures.modules };
    },
  };
}

export const importsBenchmark: Benchmark = {
  name: 'imports',
  title: 'Import cost of each dependency and of the package entry points (fresh node each run: time, RSS and heap added)',
  cases: () => [
    ...PACKAGES.map((name) => importCase(name, () => name)),
    ...Object.entries(OWN).map(([label, path]) => importCase(label, () => pathToFileURL(join(ensureCompiled(), path)).href)),
  ],
};
