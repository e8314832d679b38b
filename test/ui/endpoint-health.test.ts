/**
 * The endpoint health the dashboard shows (views.ts endpointHealth): unhealthy with the
 * launcher's reason, a warning for jobs queued with no worker to take them (or workers
 * throttled), ok while workers start or serve.
 */
import { describe, expect, it } from 'vitest';
import { endpointHealth } from '../../packages/platform/src/harness/dashboard/views.js';

const launched = { initializing: 0, idle: 0, running: 0, throttled: 0, stopping: 0, healthy: true };

describe('endpointHealth', () => {
  it("is unhealthy with the launcher's reason while the worker command keeps crashing", () => {
    expect(endpointHealth(3, { idle: 0, running: 0 }, { ...launched, healthy: false, unhealthyReason: 'exited 3 times during start-up' })).toEqual({
      state: 'unhealthy',
      reason: 'exited 3 times during start-up',
    });
  });

  it('warns of queued jobs with no worker, or with workers throttled', () => {
    expect(endpointHealth(5, { idle: 0, running: 0 }, undefined)).toMatchObject({ state: 'warning', reason: expect.stringContaining('5 queued, no worker') });
    expect(endpointHealth(2, { idle: 0, running: 0 }, { ...launched, throttled: 1 })).toMatchObject({
      state: 'warning',
      reason: expect.stringContaining('throttled'),
    });
  });

  it("states the launcher's real reason when it starts no worker of the endpoint here", () => {
    const reason = 'GPU endpoint: no GPUs known on this harness (box-1), so its workers start on harnesses with GPUs that share the database';
    const health = endpointHealth(3, { idle: 0, running: 0 }, undefined, reason);
    expect(health).toEqual({ state: 'warning', reason: `3 queued, no worker: ${reason}` });
    expect(health.reason).not.toContain('give the launcher its image');
  });

  it('is ok while workers start, serve, or nothing is queued', () => {
    expect(endpointHealth(2, { idle: 0, running: 0 }, { ...launched, initializing: 1 })).toMatchObject({
      state: 'ok',
      reason: expect.stringContaining('starting'),
    });
    expect(endpointHealth(4, { idle: 1, running: 2 }, undefined)).toEqual({ state: 'ok', reason: '1 idle, 2 running' });
    expect(endpointHealth(0, { idle: 0, running: 0 }, undefined)).toMatchObject({ state: 'ok' });
  });
});
