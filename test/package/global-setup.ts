/**
 * Vitest global setup: this repository's two packages built and packed once per test run,
 * on the first ask (the pattern of test/docker/engine/global-setup.ts). It only opens a
 * small HTTP broker on 127.0.0.1 (its URL reaches the test processes through `provide`);
 * the first test that asks (pack-this-package.ts) makes it build, the others wait for the
 * same build. The teardown removes the scratch folder. A run that packs nothing costs one
 * idle socket.
 *
 *   GET /pack  -> { tarball, platformTarball, output }   (paths in the broker's folder)
 */
import { createServer } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { buildAndPack, type PackedPackages } from './build-and-pack.js';
import { makeEagerly } from '../setup/eager-setup.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** URL of the broker that builds and packs (once) this repository's packages. */
    packBrokerUrl: string;
  }
}

/** The environment of a fresh shell: none of the parent npm run's or vitest's settings. */
function freshShellEnv(scratch: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!/^(npm_|VITEST|TSX_)/i.test(name) && name !== 'NODE_OPTIONS' && name !== 'NODE_ENV') env[name] = value;
  }
  return { ...env, npm_config_cache: join(scratch, 'npm-cache'), npm_config_update_notifier: 'false', npm_config_audit: 'false', npm_config_fund: 'false' };
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  let scratch: string | undefined;
  let packing: Promise<PackedPackages> | undefined;
  const pack = (): Promise<PackedPackages> => {
    packing ??= (async () => {
      scratch = await mkdtemp(join(tmpdir(), 'sw-pack-'));
      return buildAndPack(scratch, join(scratch, 'pack'), freshShellEnv(scratch));
    })();
    return packing;
  };
  const broker = createServer((request, reply) => {
    const route = new URL(request.url ?? '/', 'http://broker').pathname;
    const answer = route === '/pack' ? pack() : Promise.reject(new Error(`no route ${route}; expected /pack`));
    answer.then(
      (body) => reply.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body)),
      (error: unknown) =>
        reply.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ message: error instanceof Error ? error.message : String(error) })),
    );
    request.resume();
  });
  // A build takes minutes on a loaded machine: no socket timeout on the broker.
  broker.requestTimeout = 0;
  broker.headersTimeout = 0;
  broker.keepAliveTimeout = 0;
  await new Promise<void>((resolve) => broker.listen(0, '127.0.0.1', resolve));
  const { port } = broker.address() as AddressInfo;
  project.provide('packBrokerUrl', `http://127.0.0.1:${port}`);
  // `npm test`: built and packed from the start (test/setup/eager-setup.ts).
  makeEagerly('both packages built and packed', pack);
  return async () => {
    broker.close();
    await packing?.catch(() => undefined);
    if (scratch) await rm(scratch, { recursive: true, force: true });
  };
}
