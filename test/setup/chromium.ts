/**
 * @module test/setup/chromium
 * Finds the Chromium that the dashboard's browser tests (and `npm run screenshot`) drive,
 * so that `npm ci && npm test` passes on a fresh machine with nothing installed by hand.
 *
 * In order:
 * 1. `CHROMIUM_PATH`, when set (any Chromium or Chrome executable; it must exist).
 * 2. On Linux x64: the headless Chromium shipped inside the npm package
 *    `@sparticuz/chromium` (a devDependency, pinned in package-lock.json). Its files are
 *    brotli-compressed; they are unpacked once per package version into
 *    `node_modules/.cache/serverless-worker/`. The binary links only glibc, libgcc, NSS,
 *    NSPR and expat, and the package ships those last three (built for Amazon Linux 2023,
 *    whose glibc is older than bookworm's) plus Open Sans: with `LD_LIBRARY_PATH` and a
 *    fontconfig file pointing at them it runs on a bare Debian bookworm, as root or not,
 *    with no apt-get and no network.
 * 3. A system Chromium or Chrome at a well-known path (Debian's /usr/bin/chromium, a
 *    macOS app bundle): for machines where the bundled build cannot run.
 * Otherwise it throws an error that names each fix.
 *
 * Why a registry package rather than installing Debian's chromium from the test command:
 * the test command would need root, apt and a reachable Debian mirror, would change the
 * machine it runs on, and would get whatever version Debian ships that day; the package is
 * reached by `npm ci` like everything else, is pinned by the lockfile, and works for a
 * developer without root.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** What `chromium.launch` needs: the executable and the environment it runs in. */
export interface ChromiumInstall {
  executablePath: string;
  /** Extra environment variables for the browser process (merged over process.env). */
  env: Record<string, string>;
  /** Where it came from, for messages: 'CHROMIUM_PATH', 'bundled <version>' or 'system'. */
  source: string;
}

/** The bundled package's compressed files that the browser needs (not WebGL's SwiftShader). */
const BUNDLED_FILES = ['chromium.br', 'al2023.tar.br', 'fonts.tar.br'];

/** Where system browsers usually are, Debian's first. */
const SYSTEM_PATHS = [
  '/usr/bin/chromium',
  '/usr/bin/chromium-browser',
  '/usr/bin/google-chrome',
  '/usr/bin/google-chrome-stable',
  '/Applications/Chromium.app/Contents/MacOS/Chromium',
  '/Applications/Google Chrome.app/Contents/MacOS/Google Chrome',
];

/** Unpacked bundled browsers live here, one folder per package version. */
const CACHE_ROOT = fileURLToPath(new URL('../../node_modules/.cache/serverless-worker/', import.meta.url));

let found: Promise<ChromiumInstall> | undefined;

/** Find (and, the first time, unpack) the browser; the answer is kept for the process. */
export function findChromium(): Promise<ChromiumInstall> {
  found ??= locateChromium();
  return found;
}

/** Find (and unpack) the browser now, whatever an earlier call found: findChromium keeps its first answer for the process. */
export async function locateChromium(): Promise<ChromiumInstall> {
  const override = process.env.CHROMIUM_PATH;
  if (override) {
    if (!existsSync(override)) throw new Error(`CHROMIUM_PATH is ${override}, but no file is there: expected a Chromium or Chrome executable.`);
    return { executablePath: override, env: {}, source: 'CHROMIUM_PATH' };
  }
  if (process.platform === 'linux' && process.arch === 'x64') return unpackBundled();
  const system = SYSTEM_PATHS.find((path) => existsSync(path));
  if (system) return { executablePath: system, env: {}, source: 'system' };
  throw new Error(
    `No Chromium for the browser tests: the bundled one (@sparticuz/chromium) runs only on Linux x64, this is ${process.platform} ${process.arch}, ` +
      `and none was found at ${SYSTEM_PATHS.join(', ')}. ` +
      'Install Chromium or Chrome (Debian: `apt-get install -y chromium`), or set CHROMIUM_PATH to its executable.',
  );
}

/**
 * Unpack the bundled browser into a fresh folder beside the cache, then rename it into
 * place: a folder under its final name is always complete, and two test processes that
 * unpack at once both end with the same complete folder (the loser's copy is removed).
 */
async function unpackBundled(): Promise<ChromiumInstall> {
  const binDir = bundledBinDir();
  const version = (JSON.parse(readFileSync(join(binDir, '..', 'package.json'), 'utf8')) as { version: string }).version;
  const home = join(CACHE_ROOT, `chromium-${version}`);
  const install: ChromiumInstall = {
    executablePath: join(home, 'chromium'),
    env: { LD_LIBRARY_PATH: join(home, 'al2023', 'lib'), FONTCONFIG_PATH: join(home, 'fontconfig') },
    source: `bundled @sparticuz/chromium ${version}`,
  };
  if (existsSync(join(home, 'fontconfig', 'fonts.conf'))) return install;

  const staging = join(CACHE_ROOT, `.chromium-${version}-${randomBytes(4).toString('hex')}`);
  await mkdir(staging, { recursive: true });
  try {
    await inflateInto(staging, binDir);
    // The package's own fonts.conf names Lambda's folders (/tmp/fonts...): write one that
    // names ours. The system's fonts come second, for glyphs Open Sans lacks.
    await mkdir(join(staging, 'fontconfig'));
    await writeFile(
      join(staging, 'fontconfig', 'fonts.conf'),
      [
        '<?xml version="1.0"?>',
        '<!DOCTYPE fontconfig SYSTEM "fonts.dtd">',
        '<fontconfig>',
        `  <dir>${join(home, 'fonts', 'fonts')}</dir>`,
        '  <dir>/usr/share/fonts</dir>',
        `  <cachedir>${join(home, 'fontconfig', 'cache')}</cachedir>`,
        '</fontconfig>',
        '',
      ].join('\n'),
    );
    await rename(staging, home).catch((error: unknown) => {
      // Another process put a complete copy there first: use it.
      if (!existsSync(join(home, 'fontconfig', 'fonts.conf'))) throw error;
    });
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
  return install;
}

/** The package's bin/ folder (its `exports` hide package.json, so resolve its entry). */
function bundledBinDir(): string {
  let entry: string;
  try {
    entry = createRequire(import.meta.url).resolve('@sparticuz/chromium');
  } catch (error) {
    throw new Error(`The bundled browser package @sparticuz/chromium is not installed (run \`npm ci\`), or set CHROMIUM_PATH: ${String(error)}`, {
      cause: error,
    });
  }
  return join(dirname(entry), '..', 'bin');
}

/**
 * Unpack the compressed files with the package's own `inflate`, which writes under
 * `os.tmpdir()`: TMPDIR points at the staging folder while the calls start (each reads it
 * synchronously, before its first await), and is put back before anything else runs.
 */
async function inflateInto(staging: string, binDir: string): Promise<void> {
  const { inflate } = await import('@sparticuz/chromium');
  const previous = process.env.TMPDIR;
  let unpacking: Promise<string>[];
  process.env.TMPDIR = staging;
  try {
    unpacking = BUNDLED_FILES.map((file) => inflate(join(binDir, file)));
  } finally {
    if (previous === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previous;
  }
  await Promise.all(unpacking);
}
