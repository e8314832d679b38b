/**
 * HarnessRegistration against a scripted harness (node:http on 127.0.0.1, port 0): it
 * retries a refused or failed registration with backoff until accepted, repeats it as a
 * refresh, and a withdraw that comes while a registration is in flight waits for it
 * before its DELETE, so no entry is left behind.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { HarnessRegistration, type Announcement, type RegistrationSettings } from '../../src/load-balancing/announce.js';
import { waitFor, within } from '../kit/index.js';

const FAST: RegistrationSettings = { retryMinMs: 10, retryMaxMs: 40, refreshMs: 50, attemptTimeoutMs: 5_000 };

let server: Server | undefined;

afterEach(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

/** A harness whose answer to each POST is `answer(n)` (n from 1), after `delayMs`. */
async function scriptedHarness(answer: (n: number) => number, delayMs = 0): Promise<{ url: string; seen: string[] }> {
  const seen: string[] = [];
  let posts = 0;
  server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      if (request.method === 'POST') {
        const n = ++posts;
        seen.push(`POST ${n}`);
        setTimeout(() => {
          const status = answer(n);
          seen.push(`POST ${n} answered ${status}`);
          response.writeHead(status, { 'content-type': 'application/json' });
          response.end(status < 300 ? JSON.stringify({ workerId: 'w1', created: status === 201 }) : JSON.stringify({ error: { code: 'X' } }));
        }, delayMs);
      } else {
        seen.push(`${request.method} ${request.url}`);
        response.end('{"removed":true}');
      }
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

function announcement(harnessUrl: string): Announcement {
  return { harnessUrl, endpointId: 'ep', workerId: 'w1', url: 'http://127.0.0.1:1', healthUrl: 'http://127.0.0.1:1', concurrency: 1, apiKey: undefined };
}

describe('HarnessRegistration', () => {
  it('retries a refused registration with backoff until accepted, then repeats it as a refresh', async () => {
    const harness = await scriptedHarness((n) => (n <= 2 ? 503 : n === 3 ? 201 : 200));
    const registration = new HarnessRegistration(announcement(harness.url), pino({ level: 'silent' }), FAST);
    await registration.start();
    expect(registration.registered).toBe(false);
    await waitFor(() => registration.registered || undefined, 'the registration to be accepted', 10_000, 5);
    await waitFor(() => harness.seen.filter((line) => line.startsWith('POST') && line.endsWith('200')).length >= 2 || undefined, 'two refreshes', 10_000, 5);
    await within(registration.withdraw(), 'withdraw', 10_000);
    expect(harness.seen.slice(0, 6)).toEqual(['POST 1', 'POST 1 answered 503', 'POST 2', 'POST 2 answered 503', 'POST 3', 'POST 3 answered 201']);
    expect(harness.seen[harness.seen.length - 1]).toBe('DELETE /v2/ep/load-balancing/workers/w1');
    expect(registration.registered).toBe(false);
  });

  it('a withdraw during a registration in flight sends its DELETE only after the POST was answered', async () => {
    const harness = await scriptedHarness(() => 201, 300);
    const registration = new HarnessRegistration(announcement(harness.url), pino({ level: 'silent' }), FAST);
    const first = registration.start();
    await waitFor(() => harness.seen.includes('POST 1') || undefined, 'the POST to arrive', 10_000, 5);
    await within(registration.withdraw(), 'withdraw', 10_000);
    await first;
    expect(harness.seen).toEqual(['POST 1', 'POST 1 answered 201', 'DELETE /v2/ep/load-balancing/workers/w1']);
  });

  it('is not registered while no harness listens, and withdraw then ends without a harness to tell', async () => {
    // A port nothing listens on: bind one, close it.
    const probe = await scriptedHarness(() => 201);
    await new Promise<void>((resolve) => server!.close(() => resolve()));
    server = undefined;
    const registration = new HarnessRegistration(announcement(probe.url), pino({ level: 'silent' }), FAST);
    await registration.start();
    expect(registration.registered).toBe(false);
    await within(registration.withdraw(), 'withdraw', 10_000);
    expect(probe.seen).toEqual([]);
  });
});
