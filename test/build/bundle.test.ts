/**
 * `serverless-worker build`: a real CLI process bundles a worker; the bundle runs from
 * a folder with no node_modules above it (dry run, --serve-api with its metrics), and
 * with --enable-source-maps a job's traceback names the worker's .ts line.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { extraEntryPoints } from '../../packages/platform/src/build/bundle.js';
import { EXTRA_ENTRY_POINTS } from '../../packages/platform/src/build/extra-entry-points.js';
import { parseJobRequest } from '../../src/job/index.js';
import { REPO_ROOT, jsonLines, runTs } from '../child-process.js';
import { startWorkerApiServer } from '../harness/http/worker-api/worker-api-server.js';
import { waitFor } from '../kit/index.js';

const CLI = join(REPO_ROOT, 'src/cli/main.ts');
let out: string;
/** The folder of the split bundle (dist/ inside), once the --splitting test built it. */
let splitDir: string | undefined;

function noPlatformEnv(): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = { LOG_LEVEL: 'info' };
  for (const name of Object.keys(process.env)) if (name.startsWith('RUNPOD_')) env[name] = undefined;
  return env;
}

beforeAll(async () => {
  out = await mkdtemp(join(tmpdir(), 'sw-bundle-'));
  const build = await runTs(CLI, ['build', 'test/fixtures/build/worker.ts', '--outdir', join(out, 'dist')], { timeout: 120_000 });
  expect(build.exitCode, String(build.stderr)).toBe(0);
  expect(String(build.stdout)).toContain('worker.js');
  await writeFile(join(out, 'test_input.json'), JSON.stringify({ input: { fail: false } }));
}, 180_000);

afterAll(async () => {
  await rm(out, { recursive: true, force: true });
});

// Several processes per test: room for a loaded machine.
describe('serverless-worker build', { timeout: 180_000 }, () => {
  it('writes one ESM file and its source map with the sources embedded', () => {
    const bundle = readFileSync(join(out, 'dist/worker.js'), 'utf8');
    expect(bundle).toContain('createRequire');
    expect(bundle.trimEnd().endsWith('//# sourceMappingURL=worker.js.map')).toBe(true);
    const map = JSON.parse(readFileSync(join(out, 'dist/worker.js.map'), 'utf8')) as { sources: string[]; sourcesContent: (string | null)[] };
    const index = map.sources.findIndex((source) => source.endsWith('test/fixtures/build/worker.ts'));
    expect(index).toBeGreaterThanOrEqual(0);
    expect(map.sourcesContent[index]).toContain('exploded on purpose');
    // Only the author's files: no dependency and none of this package's own sources (about 33 MiB of RSS under --enable-source-maps).
    expect(map.sources.filter((source) => source.includes('node_modules') || /(^|\/)src\//.test(source))).toEqual([]);
    expect(existsSync(join(tmpdir(), 'node_modules'))).toBe(false);
    // Without a package.json saying so, Node parses the .js as CommonJS first, then again as ESM.
    expect(JSON.parse(readFileSync(join(out, 'dist/package.json'), 'utf8'))).toEqual({ type: 'module' });
  });

  it('keeps the whole map with --full-source-map, and refuses an outdir whose package.json is not "type": "module"', async () => {
    const dir = await mkdtemp(join(out, 'full-map-'));
    const full = await runTs(CLI, ['build', 'test/fixtures/build/worker.ts', '--outdir', join(dir, 'dist'), '--full-source-map'], { timeout: 120_000 });
    expect(full.exitCode, String(full.stderr)).toBe(0);
    const map = JSON.parse(readFileSync(join(dir, 'dist/worker.js.map'), 'utf8')) as { sources: string[] };
    expect(map.sources.some((source) => source.includes('node_modules/zod/'))).toBe(true);
    await mkdir(join(dir, 'cjs'));
    await writeFile(join(dir, 'cjs/package.json'), '{"type":"commonjs"}\n');
    const refused = await runTs(CLI, ['build', 'test/fixtures/build/worker.ts', '--outdir', join(dir, 'cjs')], { timeout: 120_000 });
    expect(refused.exitCode).toBe(1);
    expect(String(refused.stderr)).toContain('"type": "commonjs"');
    expect(existsSync(join(dir, 'cjs/worker.js'))).toBe(false);
  });

  it('runs its dry run with no node_modules: the package and its dependencies are inside', async () => {
    const run = await execa(process.execPath, ['--enable-source-maps', 'dist/worker.js'], { cwd: out, env: noPlatformEnv(), reject: false, timeout: 60_000 });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(jsonLines(run.stdout).at(-1)).toMatchObject({ status: 'COMPLETED', output: { ok: true } });
  });

  it("names the worker's .ts line in a job's traceback when Node runs with --enable-source-maps", async () => {
    const input = JSON.stringify({ input: { fail: true } });
    const run = await execa(process.execPath, ['--enable-source-maps', 'dist/worker.js', '--test-input', input], {
      cwd: out,
      env: noPlatformEnv(),
      reject: false,
      timeout: 60_000,
    });
    expect(run.exitCode).toBe(1);
    const record = jsonLines(run.stdout).at(-1) as { status: string; error: { error_type: string; error_traceback: string } };
    expect(record.status).toBe('FAILED');
    // keepNames: the error's class survives minification.
    expect(record.error.error_type).toBe('RangeError');
    expect(record.error.error_traceback).toMatch(/test\/fixtures\/build\/worker\.ts:8:\d+/);
    // Without source maps the frame is the bundle's.
    const plain = await execa(process.execPath, ['dist/worker.js', '--test-input', input], { cwd: out, env: noPlatformEnv(), reject: false, timeout: 60_000 });
    const plainRecord = jsonLines(plain.stdout).at(-1) as { error: { error_traceback: string } };
    expect(plainRecord.error.error_traceback).toContain('dist/worker.js');
  });

  it('serves the local API from the bundle (the harness, fastify and prom-client are inside too)', async () => {
    const child = execa(process.execPath, ['dist/worker.js', '--serve-api', '--port', '0'], { cwd: out, env: noPlatformEnv(), reject: false, timeout: 60_000 });
    let stdout = '';
    child.stdout?.on('data', (data: Buffer) => (stdout += data.toString()));
    try {
      const base = await waitFor(() => /http:\/\/127\.0\.0\.1:\d+\/v2\/local/.exec(stdout)?.[0], 'the serve-api banner', 30_000);
      const answer = await fetch(`${base}/runsync`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ input: {} }) });
      expect(await answer.json()).toMatchObject({ status: 'COMPLETED', output: { ok: true } });
      const metrics = await fetch(new URL('/metrics', base));
      expect(await metrics.text()).toContain('serverless_worker_jobs_total');
    } finally {
      child.kill('SIGTERM');
      await child;
    }
  });

  it('--splitting puts code loaded on demand into chunks/ beside a smaller bundle, which still runs alone', async () => {
    const dir = await mkdtemp(join(out, 'split-'));
    const build = await runTs(CLI, ['build', 'test/fixtures/build/worker.ts', '--outdir', join(dir, 'dist'), '--splitting'], { timeout: 120_000 });
    expect(build.exitCode, String(build.stderr)).toBe(0);
    expect(String(build.stdout)).toContain('chunks/');
    const whole = readFileSync(join(out, 'dist/worker.js')).length;
    const split = readFileSync(join(dir, 'dist/worker.js')).length;
    console.log(`[bundle] worker.js ${(whole / 1024).toFixed(0)} KiB as one file, ${(split / 1024).toFixed(0)} KiB with --splitting`);
    expect(split).toBeLessThan(whole);
    // Chunks of dependency and runtime code only have no map (a map keeping no source is dropped with its
    // comment, which --enable-source-maps would read at load); the worker's own map stays.
    const chunks = readdirSync(join(dir, 'dist/chunks'));
    expect(chunks.filter((file) => file.endsWith('.js')).length).toBeGreaterThan(3);
    expect(chunks.filter((file) => file.endsWith('.map'))).toEqual([]);
    for (const chunk of chunks) expect(readFileSync(join(dir, 'dist/chunks', chunk), 'utf8')).not.toContain('//# sourceMappingURL=');
    expect(existsSync(join(dir, 'dist/watchdog-thread.js.map'))).toBe(false);
    expect(readFileSync(join(dir, 'dist/worker.js'), 'utf8').trimEnd().endsWith('//# sourceMappingURL=worker.js.map')).toBe(true);
    expect(existsSync(join(dir, 'dist/worker.js.map'))).toBe(true);
    await writeFile(join(dir, 'test_input.json'), JSON.stringify({ input: {} }));
    const run = await execa(process.execPath, ['--enable-source-maps', 'dist/worker.js'], { cwd: dir, env: noPlatformEnv(), reject: false, timeout: 60_000 });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(jsonLines(run.stdout).at(-1)).toMatchObject({ status: 'COMPLETED' });
    splitDir = dir;
  });

  it('a split bundle on the platform: the watchdog thread starts (heartbeats arrive) and a job completes', async () => {
    expect(splitDir, 'the --splitting test above builds the split bundle').toBeDefined();
    const dir = splitDir ?? '';
    // The code that looks for the thread file sits in a chunk under chunks/; the file is beside worker.js.
    expect(existsSync(join(dir, 'dist/chunks/watchdog-thread.js'))).toBe(false);
    const server = await startWorkerApiServer({ liveness: { pingIntervalMs: 300, missedPings: 10 }, longPollMs: 5_000 });
    const child = execa(process.execPath, ['--enable-source-maps', 'dist/worker.js'], {
      cwd: dir,
      env: { ...noPlatformEnv(), ...server.envFor('split', 300), RUNPOD_POD_ID: 'split-1' },
      reject: false,
      timeout: 90_000,
    });
    let stderr = '';
    child.stderr?.on('data', (data: Buffer) => (stderr += data.toString()));
    try {
      const endpoint = server.harness.endpoint('split');
      const job = await endpoint.submit(parseJobRequest({ input: {} }));
      expect(await endpoint.waitForEnd(job.id, 60_000), stderr.slice(-2_000)).toMatchObject({ status: 'COMPLETED', output: { ok: true } });
      // Heartbeats come only from the watchdog thread.
      await waitFor(
        () => server.seen.pings.find((ping) => ping.workerId === 'split-1'),
        `a heartbeat from the split bundle (stderr: ${stderr.slice(-2_000)})`,
        30_000,
      );
      expect(stderr).not.toContain('not beside the package code');
    } finally {
      child.kill('SIGTERM');
      await child;
      await server.close();
    }
  });

  it('fails with SW_BUILD_FAILED naming a missing entry, or the file and line esbuild stopped at', async () => {
    const missing = await runTs(CLI, ['build', 'no/such/worker.ts', '--outdir', join(out, 'x')]);
    expect(missing.exitCode).toBe(1);
    expect(String(missing.stderr)).toContain('no/such/worker.ts does not exist');
    const dir = await mkdtemp(join(out, 'broken-'));
    await writeFile(join(dir, 'worker.ts'), "import { serve } from 'serverless-worker';\nconst = 1;\n");
    const broken = await runTs(CLI, ['build', join(dir, 'worker.ts'), '--outdir', join(dir, 'dist')]);
    expect(broken.exitCode).toBe(1);
    expect(String(broken.stderr)).toMatch(/worker\.ts:2:\d+/);
  });
});

describe('extra entry points', () => {
  it('every file src starts by URL as a thread is listed, so that it is emitted beside a bundle', async () => {
    const { readdir, readFile } = await import('node:fs/promises');
    const files = (await readdir(join(REPO_ROOT, 'src'), { recursive: true })).filter((file) => file.endsWith('.ts'));
    const started: string[] = [];
    for (const file of files) {
      // Code only: doc comments may show the pattern.
      const text = (await readFile(join(REPO_ROOT, 'src', file), 'utf8'))
        .split('\n')
        .filter((line) => !/^\s*(\*|\/\/|\/\*)/.test(line))
        .join('\n');
      for (const match of text.matchAll(/new URL\(\s*['"]\.\/([\w.-]+)\.js['"],\s*import\.meta\.url\s*\)/g)) started.push(match[1] ?? '');
    }
    // A thread's program module is named *-thread.ts (transports/watchdog/watchdog-thread.ts).
    for (const file of files) if (/(^|\/)[\w-]+-thread\.ts$/.test(file)) started.push(file.replace(/^.*\//, '').replace(/\.ts$/, ''));
    const listed = EXTRA_ENTRY_POINTS.map((entry) => entry.out);
    expect(new Set(listed).size).toBe(listed.length);
    for (const name of started) expect(listed, `src starts ./${name}.js by URL: add it to src/build/extra-entry-points.ts`).toContain(name);
  });

  it('takes each listed file from the package (.js installed, .ts in a clone) when it exists', async () => {
    const root = await mkdtemp(join(out, 'package-'));
    expect(extraEntryPoints(root)).toEqual([]);
    const first = EXTRA_ENTRY_POINTS[0];
    if (!first) return;
    await mkdir(join(root, first.source, '..'), { recursive: true });
    await writeFile(join(root, `${first.source}.ts`), 'export {};\n');
    expect(extraEntryPoints(root)).toEqual([{ in: join(root, `${first.source}.ts`), out: first.out }]);
  });
});
