/**
 * The composition root (src/harness/compose.ts): what it opens it wires at construction
 * and closes with the server; the launcher's view reaches the routes as an option, not as
 * a field set on the Harness afterwards; the server's parts are made there, once, and the
 * launched workers' heartbeat settings come from the worker API's schema.
 */
import { describe, expect, it } from 'vitest';
import { composeHarness } from '../../packages/platform/src/harness/compose.js';
import { Harness } from '../../src/harness/index.js';
import { createHarnessServer } from '../../packages/platform/src/harness/server-api.js';
import { launcherTarget } from '../../packages/platform/src/harness/compose-launcher.js';
import { resolveWorkerApiSettings } from '../../packages/platform/src/harness/worker-api/index.js';
import { createMetrics } from '../../src/metrics/index.js';
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

  it("serves on the parts it made: the caller's metrics registry, bound to the harness at composition", async () => {
    const metrics = createMetrics();
    const app = await composeHarness({ store: 'memory', harnessOptions: { endpoints: ['ep'] }, port: 0, rateLimits: false, metrics });
    try {
      expect(app.server.metrics).toBe(metrics);
      // A job that ends is counted in that registry (bound at composition, before the server listened).
      const submitted = await call('POST', `${app.server.url}/v2/ep/run`, { body: { input: {} } });
      expect((await call('POST', `${app.server.url}/v2/ep/cancel/${(submitted.json as { id: string }).id}`)).status).toBe(200);
      expect(await metrics.text()).toMatch(/serverless_worker_jobs_total\{status="CANCELLED"\} 1/);
      expect(app.managementStore).toBeDefined();
    } finally {
      await app.close();
    }
  });

  it("tells launched workers the heartbeat the worker API's liveness expects, its defaults from the schema", () => {
    const harness = new Harness();
    const defaults = resolveWorkerApiSettings({ harness }).liveness;
    expect(launcherTarget('http://127.0.0.1:1', 'key', defaults)).toEqual({
      url: 'http://127.0.0.1:1',
      apiKey: 'key',
      pingIntervalMs: 10_000,
      silenceWindowMs: 30_000,
    });
    const set = resolveWorkerApiSettings({ harness, liveness: { pingIntervalMs: 500, missedPings: 4 } }).liveness;
    expect(launcherTarget('http://127.0.0.1:1', undefined, set)).toEqual({ url: 'http://127.0.0.1:1', pingIntervalMs: 500, silenceWindowMs: 2_000 });
    // Liveness off: the launcher's own defaults.
    expect(launcherTarget('http://127.0.0.1:1', undefined, false)).toEqual({ url: 'http://127.0.0.1:1' });
  });
});
