/**
 * `npm pack` of this repository's two packages (the SDK, the root, and
 * serverless-worker-platform, packages/platform) without touching their own dist/: the
 * sources the tarballs are made of are copied into a scratch folder and packed there, so
 * that the build (tsc into dist/) of one test file never writes the dist/ another test file
 * is packing at the same moment. The copy's node_modules links every installed package but
 * the two of the workspace, which link the copy's own folders. Three files install the
 * tarballs (the packed-package smoke, the scaffold from tarballs, the scaffold's images):
 * they share one build per run (global-setup.ts, asked through pack-this-package.ts).
 */
import { cp, mkdir, readdir, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { execa } from 'execa';
import { fileURLToPath } from 'node:url';

/** The repository (this file is in test/package/; not child-process.ts's: global setup cannot load it). */
const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** What the packs read: each package.json's `files`, and the sources and configs their builds compile. */
const PACKED_SOURCES = ['package.json', 'README.md', 'tsconfig.json', 'tsconfig.build.json', 'bin', 'src', 'templates'];
const PLATFORM_SOURCES = ['package.json', 'README.md', 'tsconfig.build.json', 'scripts', 'src', 'ui'];
const WORKSPACE = new Map([
  ['serverless-worker', ''],
  ['serverless-worker-platform', 'packages/platform'],
]);

export interface PackedPackages {
  /** The SDK's tarball (serverless-worker). */
  readonly tarball: string;
  /** The platform's tarball (serverless-worker-platform). */
  readonly platformTarball: string;
  /** The SDK's build output (`tsc -p tsconfig.build.json` into the copy's dist/), for tests that run compiled code: read it, never write it. */
  readonly sdkDist: string;
  readonly output: string;
}

/** The copy's node_modules: a link to each installed package, the workspace's two to the copy. */
async function linkNodeModules(source: string): Promise<void> {
  const modules = join(source, 'node_modules');
  await mkdir(modules);
  for (const entry of await readdir(join(REPO_ROOT, 'node_modules'))) {
    const own = WORKSPACE.get(entry);
    await symlink(own === undefined ? join(REPO_ROOT, 'node_modules', entry) : join(source, own), join(modules, entry), 'dir');
  }
}

async function packOne(folder: string, destination: string, env: NodeJS.ProcessEnv): Promise<{ tarball: string; output: string }> {
  const before = new Set(await readdir(destination));
  // Built once beforehand (build:all), so each pack skips its prepack.
  const packed = await execa('npm', ['pack', '--ignore-scripts', '--pack-destination', destination, '--silent'], {
    cwd: folder,
    env,
    reject: false,
    all: true,
    timeout: 300_000,
  });
  const name = (await readdir(destination)).find((file) => file.endsWith('.tgz') && !before.has(file));
  if (packed.exitCode !== 0 || name === undefined)
    throw new Error(`npm pack in ${folder} failed (exit ${String(packed.exitCode)}):\n${String(packed.all).slice(-4_000)}`);
  return { tarball: join(destination, name), output: String(packed.all) };
}

/** Build both packages in a copy under `scratch` and pack them into `destination` (made if missing). */
export async function buildAndPack(scratch: string, destination: string, env: NodeJS.ProcessEnv): Promise<PackedPackages> {
  const source = join(scratch, 'package-source');
  for (const entry of PACKED_SOURCES) await cp(join(REPO_ROOT, entry), join(source, entry), { recursive: true });
  for (const entry of PLATFORM_SOURCES) await cp(join(REPO_ROOT, 'packages/platform', entry), join(source, 'packages/platform', entry), { recursive: true });
  await linkNodeModules(source);
  await mkdir(destination, { recursive: true });
  const built = await execa('npm', ['run', 'build', '-w', 'serverless-worker-platform'], { cwd: source, env, reject: false, all: true, timeout: 400_000 });
  if (built.exitCode !== 0) throw new Error(`the packages' build failed (exit ${String(built.exitCode)}):\n${String(built.all).slice(-4_000)}`);
  const sdk = await packOne(source, destination, env);
  const platform = await packOne(join(source, 'packages/platform'), destination, env);
  return {
    tarball: sdk.tarball,
    platformTarball: platform.tarball,
    sdkDist: join(source, 'dist'),
    output: `${String(built.all)}\n${sdk.output}\n${platform.output}`,
  };
}
