/**
 * @module harness-server
 * `createHarnessServer` for the package's public surface, loaded on first call.
 * fastify and the harness's routes are the largest part of this package, and a
 * worker, which imports the package's index too, never runs them: re-exported
 * statically they were a third of a worker's start-up (bench/README.md, cold start).
 */
import type { CreateHarnessServerOptions, HarnessServer } from './harness/server-api.js';
import { loadPromClient } from 'serverless-worker/internal';

export type { CreateHarnessServerOptions, HarnessServer, HarnessServerOptions } from './harness/server-api.js';

/** Build the harness's HTTP server, listen, and answer once it accepts connections (harness/compose.ts). */
export async function createHarnessServer(options: CreateHarnessServerOptions): Promise<HarnessServer> {
  const { createHarnessServer: create } = await import('./harness/compose.js');
  // Without a registry of the caller's, the server makes one: prom-client through import(), which a bundle holds.
  if (!options.metrics) await loadPromClient();
  return create(options);
}
