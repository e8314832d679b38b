/**
 * The composition root (src/harness/compose.ts): what it opens it wires at construction
 * and closes with the server; the launcher's view reaches the routes as an option, not as
 * a field set on the Harness afterwards.
 */
import { describe, expect, it } from 'vitest';
import { composeHarness } from '../../packages/platform/src/harness/compose.js';
import { Harness } from '../../src/harness/index.js';
import { createHarnessServer } from '../../packages/platform/src/harness/server-api.js';
import type { LaunchedWorkersView } from '../../packages/platform/src/harness/launcher/launched-workers-view.js';
import { call } from '../kit/index.js';

describe('composeHarness', () => {
  it('makes the harness with its settings on the store it names, serves it, and closes it with the server', async () => {
    const app = await composeHarness({ store: 'memory', harnessOptions: { endpoints: ['declared'], maxRequeues: 7 }, port: 0, rateLimits: false });
    expect(app.harness.findEndpoint('declared')).toBeDefined();
    expect(app.harness.maxRequeues).toBe(7);
    expect(app.launcher).toBeUndefined();
    expect((await call('GET', `${app.server.url}/v2/declared/health`)).status).toBe(200);
    await app.close();
    await expect(call('GET', `${app.server.url}/v2/declared/health`)).rejects.toThrow();
  });

  it("gives the routes the launcher's view at construction: /health and /v1/pods read it", async () => {
    const view: LaunchedWorkersView = {
      health: async (endpointId) => (endpointId === 'ep' ? { initializing: 0, idle: 2, running: 1, throttled: 0, stopping: 0, healthy: true } : undefined),
      logs: () => [],
      pods: async () => [],
    };
    const harness = new Harness({ endpoints: ['ep'] });
    expect('launchedWorkers' in harness).toBe(false);
    const server = await createHarnessServer({ harness, port: 0, rateLimits: false, launchedWorkers: view });
    try {
      const health = await call('GET', `${server.url}/v2/ep/health`);
      expect(health.json).toMatchObject({ workers: { idle: 2, running: 1, ready: 3 }, healthy: true });
    } finally {
      await server.close();
      await harness.close();
    }
  });
});
