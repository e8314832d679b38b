/**
 * The watchdog thread started from its file in the three ways the package runs: from
 * src/ under tsx, compiled by `tsc -p tsconfig.build.json`, and inside an esbuild
 * bundle with the thread emitted beside it as a second entry point (as
 * WATCHDOG_THREAD_FILE tells a bundler). Each time a child process pings through the
 * thread with its job listed, then blocks its event loop past the job's deadline: the
 * thread must stop listing the job, say why on stderr and end the process with exit 1.
 */
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEV_WATCHDOG_THREAD_ENV, WATCHDOG_THREAD_FILE, resolveThreadFile } from '../../../src/transports/watchdog/index.js';
import { REPO_ROOT } from '../../child-process.js';
import { builtSdkDist } from '../../package/pack-this-package.js';

const PROBE = fileURLToPath(new URL('./fixtures/blocked-probe.mjs', import.meta.url));
const TSX_LOADER = import.meta.resolve('tsx');

let server: http.Server;
let pingBase: string;
const pings: Array<{ url: string; at: number }> = [];
const scratch = mkdtempSync(join(tmpdir(), 'sw-watchdog-'));

beforeAll(async () => {
  server = http.createServer((request, response) => {
    pings.push({ url: request.url ?? '', at: Date.now() });
    response.end('{}');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  pingBase = `http://127.0.0.1:${(server.address() as AddressInfo).port}/ping`;
});
afterAll(async () => {
  server.close();
  rmSync(scratch, { recursive: true, force: true });
});

/** Run the probe with `moduleUrl` (and node flags), pinging /ping/<name>; answers what it saw. */
async function probe(name: string, moduleUrl: string, nodeArgs: string[] = []): Promise<void> {
  const startedAt = Date.now();
  const run = await execa(process.execPath, [...nodeArgs, PROBE, moduleUrl, `${pingBase}/${name}`], {
    cwd: REPO_ROOT,
    // Each way finds its own file: not the compiled thread this test run names for source runs.
    env: { [DEV_WATCHDOG_THREAD_ENV]: undefined },
    reject: false,
    timeout: 120_000,
  });
  const mine = pings.filter((ping) => ping.url.startsWith(`/ping/${name}?`));
  const withJob = mine.filter((ping) => ping.url.includes('job_id=probe-job'));
  const lastWithJob = withJob.at(-1)?.at ?? 0;
  console.log(`[watchdog thread: ${name}] exit ${run.exitCode} after ${Date.now() - startedAt} ms; ${mine.length} pings, ${withJob.length} listing the job`);
  expect(run.exitCode, `stderr: ${run.stderr}`).toBe(1);
  expect(run.stdout).toContain('blocking');
  expect(run.stderr).toMatch(/serverless-worker: job probe-job blocked the event loop for [\d.]+ s, past its execution timeout plus the 200 ms grace/);
  // Pings came from the thread, with the job, and once it fired without it.
  expect(withJob.length).toBeGreaterThan(0);
  expect(mine.some((ping) => ping.at >= lastWithJob && !ping.url.includes('job_id='))).toBe(true);
}

describe('the watchdog thread file', () => {
  it('names its entry and file, and is found beside its module under src/ (TypeScript, started through tsx)', () => {
    expect(WATCHDOG_THREAD_FILE).toMatchObject({ entry: 'src/transports/watchdog/watchdog-thread.ts', name: 'watchdog-thread' });
    const found = resolveThreadFile(pathToFileURL(join(REPO_ROOT, 'src/transports/watchdog/watchdog.ts')), undefined, {});
    expect(found?.url.pathname).toBe(join(REPO_ROOT, WATCHDOG_THREAD_FILE.entry));
    expect(found?.bootstrap).toContain('register()');
    expect(resolveThreadFile(pathToFileURL(join(scratch, 'nothing-here.js')))).toBeUndefined();
    // A split bundle's chunk (chunks/, nothing emitted there): found beside the main script instead.
    const besideMain = resolveThreadFile(pathToFileURL(join(scratch, 'chunks/chunk-1.js')), join(REPO_ROOT, 'src/transports/watchdog/watchdog.ts'), {});
    expect(besideMain?.url.pathname).toBe(join(REPO_ROOT, WATCHDOG_THREAD_FILE.entry));
    expect(resolveThreadFile(pathToFileURL(join(scratch, 'chunks/chunk-1.js')), join(scratch, 'worker.js'))).toBeUndefined();
  });

  it('from src/, starts the compiled copy SW_DEV_WATCHDOG_THREAD names instead of tsx in the thread, when it is a JavaScript file that exists', () => {
    const watchdogModule = pathToFileURL(join(REPO_ROOT, 'src/transports/watchdog/watchdog.ts'));
    const compiled = join(scratch, 'compiled', `${WATCHDOG_THREAD_FILE.name}.js`);
    mkdirSync(dirname(compiled), { recursive: true });
    writeFileSync(compiled, '');
    expect(resolveThreadFile(watchdogModule, undefined, { [DEV_WATCHDOG_THREAD_ENV]: compiled })).toEqual({ url: pathToFileURL(compiled) });
    // Not there, not JavaScript, or empty: the source through tsx, as without it.
    for (const named of [join(scratch, 'missing.js'), join(REPO_ROOT, WATCHDOG_THREAD_FILE.entry), ''])
      expect(resolveThreadFile(watchdogModule, undefined, { [DEV_WATCHDOG_THREAD_ENV]: named })?.bootstrap, named).toContain('register()');
    // A compiled run (dist/, a bundle) finds its own file beside it and never reads it.
    const dist = join(scratch, 'dist-like');
    mkdirSync(dist, { recursive: true });
    writeFileSync(join(dist, `${WATCHDOG_THREAD_FILE.name}.js`), '');
    expect(resolveThreadFile(pathToFileURL(join(dist, 'watchdog.js')), undefined, { [DEV_WATCHDOG_THREAD_ENV]: compiled })?.url.pathname).toBe(
      join(dist, `${WATCHDOG_THREAD_FILE.name}.js`),
    );
  });

  it('runs from src/ under tsx', { timeout: 150_000 }, async () => {
    await probe('tsx', pathToFileURL(join(REPO_ROOT, 'src/transports/watchdog/index.ts')).href, ['--import', TSX_LOADER]);
  });

  it('runs from the output of tsc -p tsconfig.build.json', { timeout: 600_000 }, async () => {
    // The run's one build of the SDK (test/package/global-setup.ts): the same tsc -p tsconfig.build.json the package ships.
    const out = await builtSdkDist();
    expect(resolveThreadFile(pathToFileURL(join(out, 'transports/watchdog/watchdog.js')))?.bootstrap).toBeUndefined();
    await probe('dist', pathToFileURL(join(out, 'transports/watchdog/index.js')).href);
  });

  it('runs from an esbuild bundle with the thread emitted beside it as a second entry point', { timeout: 150_000 }, async () => {
    const out = join(scratch, 'bundle');
    const { build } = await import('esbuild');
    await build({
      entryPoints: {
        // Any worker bundle: here one whose code starts the watchdog.
        'worker-bundle': join(REPO_ROOT, 'src/transports/watchdog/index.ts'),
        [WATCHDOG_THREAD_FILE.name]: join(REPO_ROOT, WATCHDOG_THREAD_FILE.entry),
      },
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      outdir: out,
      outExtension: { '.js': '.mjs' },
      logLevel: 'error',
    });
    await probe('bundle', pathToFileURL(join(out, 'worker-bundle.mjs')).href);
  });
});
