/**
 * @module test/harness/management/management-server
 * A real fastify app on 127.0.0.1 port 0 with the management plugin under /v1 and the
 * shared error handler, as the harness server wires it.
 */
import Fastify from 'fastify';
import { installErrorHandler } from '../../../packages/platform/src/harness/http/error-reply.js';
import { InMemoryManagementStore, managementApi, type ManagementApiOptions } from '../../../packages/platform/src/harness/management/index.js';

export interface RunningManagementServer {
  /** `http://127.0.0.1:<port>/v1` */
  baseUrl: string;
  /** The in-memory store behind the routes (its methods answer at once). */
  store: InMemoryManagementStore;
  close(): Promise<void>;
}

export async function startManagementServer(options: Partial<Omit<ManagementApiOptions, 'store'>> = {}): Promise<RunningManagementServer> {
  const store = new InMemoryManagementStore();
  const app = Fastify({ logger: false });
  installErrorHandler(app);
  await app.register(managementApi, { ...options, store, prefix: '/v1' });
  const address = await app.listen({ host: '127.0.0.1', port: 0 });
  return { baseUrl: `${address}/v1`, store, close: () => app.close() };
}
