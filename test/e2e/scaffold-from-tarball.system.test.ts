/**
 * What the README tells a worker author, done from the packed package: `npm pack`,
 * `serverless-worker init` into a temporary folder, the tarball installed there (the
 * registry stands behind npm's cache) and each of its entry points imported by name,
 * then the project's own commands (and, for a --stream project written by the installed
 * command, its install, dry run and tests): `npm run dry-run`; `npm run dev` answering
 * /runsync. The default scaffold's `npm test`, `npm run build` and `npm start` are the
 * registry journey's five-minute path (test/package/registry-journey.test.ts: the same
 * template, installed from the same tarballs published to a registry, its tests' count and
 * typed `init` checked there), not run twice. The --stream project's `npm install` runs over
 * the first project's install (its lockfile copied, node_modules hard-linked: `cp -al` takes
 * a fraction of a second where a plain copy took as long as the install it saved on a loaded
 * machine, and a fresh install of the same manifest cost about 10 s of npm's CPU); it must
 * find the tree up to date. The generated Dockerfile is built and run by a real
 * Docker engine in test/docker/scaffold-image.test.ts.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { execa, type Options } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, jsonLines, runTs } from '../child-process.js';
import { ENTRY_POINTS, exportKeysScript } from '../exports/entry-points.js';
import { waitFor } from '../kit/index.js';
import { packThisPackage } from '../package/pack-this-package.js';

const scratch = await mkdtemp(join(tmpdir(), 'sw-scaffold-e2e-'));
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

/** The environment of a fresh shell: none of the parent npm run's or vitest's settings, no platform. */
function authorEnv(): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = {};
  for (const name of Object.keys(process.env)) {
    if (/^(npm_|RUNPOD_|VITEST|TSX_)/i.test(name) || name === 'NODE_ENV' || name === 'NODE_OPTIONS') env[name] = undefined;
  }
  return {
    ...env,
    LOG_LEVEL: 'info',
    // The packages are in npm's cache after this repository's own install; the registry fills gaps.
    npm_config_prefer_offline: 'true',
    npm_config_audit: 'false',
    npm_config_fund: 'false',
    npm_config_update_notifier: 'false',
  };
}

const timings: string[] = [];
async function step(what: string, file: string, args: string[], options: Options & { cwd: string }) {
  const started = performance.now();
  const result = await execa(file, args, { env: authorEnv(), reject: false, timeout: 300_000, all: true, ...options });
  timings.push(`${what} ${Math.round(performance.now() - started)} ms`);
  expect(result.exitCode, `${what} failed:\n${String(result.all).slice(-4000)}`).toBe(0);
  return result;
}

describe('a worker project from the packed package', () => {
  it('inits, installs the tarball, imports its entry points, scaffolds --stream and tests it, serves npm run dev', { timeout: 1_200_000 }, async () => {
    const pack = join(scratch, 'pack');
    // Built and packed once per run for every file that installs the tarballs (pack-this-package.ts).
    const packStarted = performance.now();
    const packed = await packThisPackage(pack);
    const tarball = basename(packed.tarball);
    const platformTarball = basename(packed.platformTarball);
    timings.push(`npm pack (both packages) ${Math.round(performance.now() - packStarted)} ms`);
    expect(tarball).toMatch(/^serverless-worker-\d.*\.tgz$/);
    expect(platformTarball).toMatch(/^serverless-worker-platform-.*\.tgz$/);

    const project = join(scratch, 'my-worker');
    const init = await runTs(join(REPO_ROOT, 'src/cli/main.ts'), ['init', project]);
    expect(init.exitCode, String(init.stderr)).toBe(0);
    // `npm install <tarball>` records it as file:../pack/<tarball>, relative to the project; both
    // in one command, as neither is on the registry (the platform stays a dev dependency).
    await step('npm install', 'npm', ['install', `../pack/${tarball}`, `../pack/${platformTarball}`], { cwd: project });
    const manifest = JSON.parse(await readFile(join(project, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
      devDependencies: Record<string, string>;
    };
    expect(manifest.dependencies['serverless-worker']).toBe(`file:../pack/${tarball}`);
    expect(manifest.devDependencies['serverless-worker-platform']).toBe(`file:../pack/${platformTarball}`);
    const installed = JSON.parse(await readFile(join(project, 'node_modules/serverless-worker/package.json'), 'utf8')) as { version: string };
    expect(existsSync(join(project, 'node_modules/serverless-worker/src'))).toBe(false);
    // Each entry point resolves through the installed package's exports map, with exactly its names.
    const entries = await step(
      'import the entry points',
      process.execPath,
      ['--input-type=module', '-e', exportKeysScript(ENTRY_POINTS.map((entry) => entry.specifier))],
      { cwd: project },
    );
    expect(JSON.parse(String(entries.stdout))).toEqual(Object.fromEntries(ENTRY_POINTS.map((entry) => [entry.specifier, [...entry.values].sort()])));

    // The installed command (dist/, from the tarball) writes the same scaffold from its shipped templates.
    const again = await step('npx serverless-worker init', 'npx', ['serverless-worker', 'init', '--stream', '../stream-worker'], { cwd: project });
    expect(String(again.all)).toContain('src/handler.ts');
    expect(await readFile(join(scratch, 'stream-worker/src/handler.ts'), 'utf8')).toContain('async function*');
    // The installed command's project works on its own too: its install, dry run (the
    // stream's chunks, then the record) and node:test suite.
    const streamProject = join(scratch, 'stream-worker');
    // Its package.json asks for what the first project's does (the scaffold's one manifest):
    // that install is given to it (the lockfile copied, node_modules hard-linked), and npm's
    // own install, as the author types it, must find the tree it wants there.
    await step('copy of the first install (stream project)', 'cp', ['-a', join(project, 'package-lock.json'), streamProject], { cwd: scratch });
    await step('hard links to the first node_modules (stream project)', 'cp', ['-al', join(project, 'node_modules'), streamProject], { cwd: scratch });
    const streamInstall = await step('npm install (stream project)', 'npm', ['install', `../pack/${tarball}`, `../pack/${platformTarball}`], {
      cwd: streamProject,
    });
    expect(String(streamInstall.all)).toMatch(/^up to date\b/m);
    const streamDryRun = await step('npm run dry-run (stream project)', 'npm', ['run', '--silent', 'dry-run'], { cwd: streamProject });
    const streamLines = jsonLines(streamDryRun.stdout as string) as Array<Record<string, unknown>>;
    expect(
      streamLines
        .filter((line) => 'stream' in line)
        .map((line) => (line.stream as { output: unknown }).output)
        .join(''),
    ).toBe('one two three ');
    expect(streamLines.at(-1)).toMatchObject({ status: 'COMPLETED', output: ['one ', 'two ', 'three '] });
    const streamTest = await step('npm test (stream project)', 'npm', ['test'], { cwd: streamProject });
    expect(String(streamTest.all)).toMatch(/# pass 3\b/);
    expect(String(streamTest.all)).toMatch(/# fail 0\b/);

    const dryRun = await step('npm run dry-run', 'npm', ['run', '--silent', 'dry-run'], { cwd: project });
    expect(jsonLines(dryRun.stdout as string).at(-1)).toMatchObject({ status: 'COMPLETED', output: { text: 'hello hello' } });

    // npm run dev: the local API (--serve-api --watch). Its own process group, so that it and
    // the worker it started stop with it.
    const dev = execa('npm', ['run', 'dev', '--', '--port', '0'], {
      cwd: project,
      env: authorEnv(),
      detached: true,
      reject: false,
      timeout: 120_000,
      all: true,
    });
    let devOutput = '';
    dev.all?.on('data', (data: Buffer) => (devOutput += data.toString()));
    try {
      const base = await waitFor(() => /http:\/\/127\.0\.0\.1:\d+\/v2\/local/.exec(devOutput)?.[0], 'the npm run dev banner', 60_000);
      const answer = await fetch(`${base}/runsync`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: await readFile(join(project, 'test_input.json'), 'utf8'),
      });
      expect(await answer.json()).toMatchObject({ status: 'COMPLETED', output: { text: 'hello hello' } });
    } finally {
      if (dev.pid !== undefined) process.kill(-dev.pid, 'SIGTERM');
      await dev;
    }
    console.log(`[scaffold-e2e] serverless-worker ${installed.version}: ${timings.join('; ')}`);
  });
});
