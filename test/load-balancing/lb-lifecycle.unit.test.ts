/**
 * startLoadBalancingWorker in this process: stop() during init aborts init's signal and
 * resolves only once init's own clean-up has ended (within timeoutGraceMs); PORT=0 with
 * PORT_HEALTH=0 gives /ping a free port of its own, apart from the app's. Real sockets
 * on 127.0.0.1, port 0.
 */
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { startLoadBalancingWorker, type InitContext } from '../../src/index.js';
import { waitFor, within } from '../kit/index.js';
import { statusOf } from './lb-process.js';

const env = { PORT: '0', SERVERLESS_WORKER_HOST: '127.0.0.1', SERVERLESS_WORKER_EXPECT_GPU: 'none' };
const silent = pino({ level: 'silent' });

describe('startLoadBalancingWorker', () => {
  it('stop() during init aborts its signal and waits for its clean-up', { timeout: 30_000 }, async () => {
    const steps: string[] = [];
    let initStarted!: () => void;
    const started = new Promise<void>((resolve) => (initStarted = resolve));
    const worker = await startLoadBalancingWorker(
      {
        init: async ({ signal }: InitContext) => {
          initStarted();
          await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
          steps.push(`aborted: ${(signal.reason as { code?: string }).code}`);
          // Async clean-up after the abort (a partial download removed, a child server stopped).
          await new Promise((resolve) => setTimeout(resolve, 300));
          steps.push('cleaned up');
          throw signal.reason;
        },
        app: () => (_request, response) => response.end('never'),
        timeoutGraceMs: 10_000,
        logger: silent,
      },
      { processEnv: env, signals: false },
    );
    await within(started, 'init to start', 10_000);
    expect(await statusOf(`${worker.healthUrl}/ping`)).toBe(204);
    expect(worker.state).toBe('initializing');
    const code = await within(worker.stop(), 'stop', 20_000);
    steps.push('stopped');
    expect(code).toBe(0);
    expect(steps).toEqual(['aborted: SW_WORKER_SHUTDOWN', 'cleaned up', 'stopped']);
    expect(worker.state).toBe('stopped');
  });

  it('stop() after a failed start-up answers exit code 1', { timeout: 30_000 }, async () => {
    const worker = await startLoadBalancingWorker(
      {
        init: () => Promise.reject(new Error('no weights')),
        app: () => (_request, response) => response.end('never'),
        failureExitDelayMs: 600_000,
        logger: silent,
      },
      { processEnv: env, signals: false },
    );
    await waitFor(async () => (await statusOf(`${worker.healthUrl}/ping`)) === 503 || undefined, '/ping 503 after the failed init', 10_000, 20);
    expect(await within(worker.stop(), 'stop', 10_000)).toBe(1);
    expect(await worker.done).toBe(1);
  });

  it('PORT=0 with PORT_HEALTH=0: /ping on a free port of its own, apart from the app', { timeout: 30_000 }, async () => {
    const worker = await startLoadBalancingWorker(
      { app: () => (_request, response) => response.end('app'), logger: silent },
      { processEnv: { ...env, PORT_HEALTH: '0' }, signals: false },
    );
    try {
      const appPort = new URL(worker.url).port;
      const healthPort = new URL(worker.healthUrl).port;
      expect(healthPort).not.toBe(appPort);
      await waitFor(async () => (await statusOf(`${worker.healthUrl}/ping`)) === 200 || undefined, '/ping 200', 10_000, 20);
      expect(await statusOf(`${worker.healthUrl}/other`)).toBe(404);
      expect(await (await fetch(`${worker.url}/anything`)).text()).toBe('app');
    } finally {
      expect(await within(worker.stop(), 'stop', 10_000)).toBe(0);
    }
  });

  it('PORT=0 with PORT_HEALTH unset: one server answers /ping and the app', { timeout: 30_000 }, async () => {
    const worker = await startLoadBalancingWorker(
      { app: () => (_request, response) => response.end('app'), logger: silent },
      { processEnv: env, signals: false },
    );
    try {
      expect(worker.healthUrl).toBe(worker.url);
      await waitFor(async () => (await statusOf(`${worker.url}/ping`)) === 200 || undefined, '/ping 200', 10_000, 20);
      expect(await (await fetch(`${worker.url}/anything`)).text()).toBe('app');
    } finally {
      await within(worker.stop(), 'stop', 10_000);
    }
  });
});
