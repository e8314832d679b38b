/**
 * waitForUrl against real local servers on 127.0.0.1 port 0: one that answers 503
 * until a delay has passed, one that never becomes ready, a port nobody listens on,
 * and an abort through the signal. Bounded; the measured figures are printed.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ServerlessWorkerError, waitForUrl } from '../../src/index.js';

const servers: Server[] = [];

afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

async function listen(handler: Parameters<typeof createServer>[1]): Promise<string> {
  const server = createServer(handler);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('waitForUrl', () => {
  it('waits until a server that starts slowly answers 200', async () => {
    const readyAt = Date.now() + 800;
    let hits = 0;
    const url = await listen((_request, response) => {
      hits++;
      response.statusCode = Date.now() >= readyAt ? 200 : 503;
      response.end();
    });
    const result = await waitForUrl(`${url}/health`, { timeoutMs: 20_000, intervalMs: 50, maxIntervalMs: 200 });
    console.log(`ready after ${Math.round(result.elapsedMs)} ms and ${result.attempts} attempts`);
    expect(result.status).toBe(200);
    expect(result.attempts).toBeGreaterThan(1);
    expect(result.attempts).toBe(hits);
    expect(Date.now()).toBeGreaterThanOrEqual(readyAt);
  });

  it('gives up after its timeout, naming the URL, the attempts and the last status', async () => {
    const url = await listen((_request, response) => {
      response.statusCode = 503;
      response.end('loading');
    });
    const error = await waitForUrl(`${url}/ready`, { timeoutMs: 600, intervalMs: 50 }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ServerlessWorkerError);
    const coded = error as ServerlessWorkerError;
    expect(coded.code).toBe('SW_URL_NOT_READY');
    expect(coded.message).toContain(`${url}/ready did not answer ready within 600 ms`);
    expect(coded.message).toContain('last: HTTP 503');
    expect(coded.details).toMatchObject({ timeoutMs: 600, last: 'HTTP 503' });
    expect(Number(coded.details?.attempts)).toBeGreaterThan(1);
  });

  it('names the URL without its credentials or query in the error and its details', async () => {
    const url = await listen((_request, response) => {
      response.statusCode = 503;
      response.end();
    });
    const withSecrets = url.replace('http://', 'http://admin:hunter2@') + '/ready?token=s3cret';
    const error = (await waitForUrl(withSecrets, { timeoutMs: 300, intervalMs: 20 }).catch((caught: unknown) => caught)) as ServerlessWorkerError;
    expect(error.code).toBe('SW_URL_NOT_READY');
    expect(error.message).toContain(`${url}/ready (query, fragment and credentials hidden) did not answer ready`);
    expect(error.details?.url).toBe(`${url}/ready (query, fragment and credentials hidden)`);
    for (const secret of ['hunter2', 'admin', 's3cret']) expect(JSON.stringify({ message: error.message, details: error.details })).not.toContain(secret);
  });

  it('names the connection error when nothing listens, and accepts a custom status check', async () => {
    const url = await listen((_request, response) => response.end());
    // Take the port back: nothing listens there now.
    const server = servers.pop()!;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const error = (await waitForUrl(url, { timeoutMs: 400, intervalMs: 20 }).catch((caught: unknown) => caught)) as ServerlessWorkerError;
    expect(error.code).toBe('SW_URL_NOT_READY');
    expect(error.message).toContain('ECONNREFUSED');
    const teapot = await listen((_request, response) => {
      response.statusCode = 418;
      response.end();
    });
    await expect(waitForUrl(teapot, { timeoutMs: 5_000, accept: (status) => status === 418 })).resolves.toMatchObject({ status: 418, attempts: 1 });
  });

  it('rejects with the signal reason when its signal aborts (init passes ctx.signal)', async () => {
    const url = await listen((_request, response) => {
      response.statusCode = 503;
      response.end();
    });
    const controller = new AbortController();
    setTimeout(() => controller.abort(new ServerlessWorkerError('SW_INIT_TIMEOUT', 'init timed out')), 200);
    await expect(waitForUrl(url, { timeoutMs: 30_000, intervalMs: 20, signal: controller.signal })).rejects.toMatchObject({ code: 'SW_INIT_TIMEOUT' });
    await expect(waitForUrl('ftp://example.invalid/')).rejects.toMatchObject({ code: 'SW_INVALID_OPTIONS' });
  });
});
