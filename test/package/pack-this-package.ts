/**
 * `npm pack` of this repository without touching its own dist/: the sources the tarball
 * is made of are copied into a scratch folder (node_modules linked) and packed there, so
 * that prepack's build (tsc into dist/) of one test file never writes the dist/ another
 * test file is packing at the same moment (three files pack: the packed-package smoke,
 * the scaffold from a tarball, and the scaffold's images).
 */
import { cp, mkdir, readdir, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { execa } from 'execa';
import { REPO_ROOT } from '../child-process.js';

/** What `npm pack` reads: package.json's `files`, and the sources and configs its prepack compiles. */
const PACKED_SOURCES = ['package.json', 'README.md', 'tsconfig.json', 'tsconfig.build.json', 'bin', 'scripts', 'src', 'templates', 'ui'];

/** Pack into `destination` (made if missing) through a copy under `scratch`; answers the tarball's path and npm's output. */
export async function packThisPackage(scratch: string, destination: string, env: NodeJS.ProcessEnv): Promise<{ tarball: string; output: string }> {
  const source = join(scratch, 'package-source');
  for (const entry of PACKED_SOURCES) await cp(join(REPO_ROOT, entry), join(source, entry), { recursive: true });
  await symlink(join(REPO_ROOT, 'node_modules'), join(source, 'node_modules'), 'dir');
  await mkdir(destination, { recursive: true });
  const packed = await execa('npm', ['pack', '--pack-destination', destination, '--silent'], { cwd: source, env, reject: false, all: true, timeout: 300_000 });
  const name = (await readdir(destination)).find((file) => file.endsWith('.tgz'));
  if (packed.exitCode !== 0 || name === undefined) throw new Error(`npm pack failed (exit ${String(packed.exitCode)}):\n${String(packed.all).slice(-4_000)}`);
  return { tarball: join(destination, name), output: String(packed.all) };
}
