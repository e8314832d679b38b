/**
 * Spec 8.2 rate limits: the limiter alone (sliding window, concurrency, Retry-After,
 * scaling with workers) with a fake time source, and 429 over real HTTP.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Harness, ManualClock } from '../../../src/harness/index.js';
import { DEFAULT_RATE_LIMITS, RateLimiter, effectiveLimit, resolveServerOptions } from '../../../packages/platform/src/harness/server-api.js';
import { call, errorCode, startTestServer, type TestServer, waitFor } from '../../kit/index.js';

describe('RateLimiter', () => {
  it('accepts up to the limit per window, then refuses with the time until the oldest request leaves it', async () => {
    let now = 1_000_000;
    const limiter = new RateLimiter({ windowMs: 10_000, now: () => now });
    const limit = { perWindow: 3, concurrent: null };
    for (let i = 0; i < 3; i++) {
      const decision = limiter.acquire('k', limit);
      expect(decision.allowed).toBe(true);
      if (decision.allowed) decision.release();
      now += 1_000;
    }
    const refused = limiter.acquire('k', limit);
    expect(refused).toMatchObject({ allowed: false, reason: 'rate', retryAfterMs: 7_000 });
    now += 7_000;
    expect(limiter.acquire('k', limit).allowed).toBe(true);
    // Keys are separate: another endpoint or operation has its own window.
    expect(limiter.acquire('other', limit).allowed).toBe(true);
  });

  it('slides: a request leaves the window exactly windowMs after it came', async () => {
    let now = 0;
    const limiter = new RateLimiter({ windowMs: 100, now: () => now });
    const limit = { perWindow: 2, concurrent: null };
    limiter.acquire('k', limit);
    now = 50;
    limiter.acquire('k', limit);
    now = 99;
    expect(limiter.acquire('k', limit).allowed).toBe(false);
    now = 100;
    expect(limiter.acquire('k', limit).allowed).toBe(true);
    expect(limiter.acquire('k', limit).allowed).toBe(false);
  });

  it('caps requests in flight; release frees the slot (once, however often it is called)', async () => {
    const limiter = new RateLimiter({ now: () => 0 });
    const limit = { perWindow: 100, concurrent: 2 };
    const a = limiter.acquire('k', limit);
    const b = limiter.acquire('k', limit);
    expect(limiter.acquire('k', limit)).toMatchObject({ allowed: false, reason: 'concurrency' });
    if (!a.allowed || !b.allowed) throw new Error('expected both accepted');
    a.release();
    a.release();
    expect(limiter.inFlight('k')).toBe(1);
    expect(limiter.acquire('k', limit).allowed).toBe(true);
  });

  it('the effective limit is the larger of the base and workers x requestsPerWorker; concurrency grows alike', async () => {
    expect(effectiveLimit(DEFAULT_RATE_LIMITS.run, 0, 100)).toEqual({ perWindow: 1000, concurrent: 200 });
    expect(effectiveLimit(DEFAULT_RATE_LIMITS.run, 10, 100)).toEqual({ perWindow: 1000, concurrent: 200 });
    expect(effectiveLimit(DEFAULT_RATE_LIMITS.run, 20, 100)).toEqual({ perWindow: 2000, concurrent: 400 });
    expect(effectiveLimit(DEFAULT_RATE_LIMITS['purge-queue'], 3, 10)).toEqual({ perWindow: 30, concurrent: null });
  });

  it('has the spec 8.2 table', async () => {
    expect(DEFAULT_RATE_LIMITS).toEqual({
      runsync: { perWindow: 2000, concurrent: 400 },
      run: { perWindow: 1000, concurrent: 200 },
      status: { perWindow: 2000, concurrent: 400 },
      stream: { perWindow: 2000, concurrent: 400 },
      cancel: { perWindow: 100, concurrent: 20 },
      'purge-queue': { perWindow: 2, concurrent: null },
      openai: { perWindow: 2000, concurrent: 400 },
      requests: { perWindow: 10, concurrent: 2 },
    });
  });
});

describe('429 over HTTP', () => {
  let running: TestServer | undefined;
  afterEach(async () => {
    await running?.close();
    running = undefined;
  });

  /** A window far longer than any test, so that none ends mid-test. */
  const HOUR = 3_600_000;

  it('is on by default', async () => {
    const config = resolveServerOptions({ harness: new Harness() });
    expect(config.rateLimits).toMatchObject({ windowMs: 10_000, requestsPerWorker: 100, limits: {} });
  });

  it('the third /purge-queue within a window gets 429 with Retry-After', async () => {
    running = await startTestServer({ rateLimits: { windowMs: HOUR } });
    const url = `${running.endpointUrl()}/purge-queue`;
    expect((await call('POST', url)).status).toBe(200);
    expect((await call('POST', url)).status).toBe(200);
    const refused = await call('POST', url);
    expect(refused.status).toBe(429);
    expect(errorCode(refused)).toBe('SW_RATE_LIMITED');
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(HOUR / 1000);
    // Per endpoint: another endpoint is not affected.
    expect((await call('POST', `${running.endpointUrl('other')}/purge-queue`)).status).toBe(200);
    // Per operation: other routes of the endpoint are not affected.
    expect((await call('GET', `${running.endpointUrl()}/health`)).status).toBe(200);
  });

  it('the limits are configurable, and grow with running workers', async () => {
    running = await startTestServer({ rateLimits: { windowMs: HOUR, requestsPerWorker: 3, limits: { run: { perWindow: 1 } } } }, { clock: new ManualClock() });
    const url = `${running.endpointUrl()}/run`;
    expect((await call('POST', url, { body: { input: {} } })).status).toBe(200);
    expect((await call('POST', url, { body: { input: {} } })).status).toBe(429);
    // One worker up: max(1, 1 x 3) = 3 per window, of which one is used.
    await running.harness.endpoint('ep').workers.touch('worker-1', {}, 0);
    expect((await call('POST', url, { body: { input: {} } })).status).toBe(200);
    expect((await call('POST', url, { body: { input: {} } })).status).toBe(200);
    expect((await call('POST', url, { body: { input: {} } })).status).toBe(429);
  });

  it('counts concurrent requests: a second /runsync while one waits gets 429; after it ends the next passes', async () => {
    const clock = new ManualClock();
    running = await startTestServer({ rateLimits: { windowMs: HOUR, limits: { runsync: { concurrent: 1 } } } }, { clock });
    const url = `${running.endpointUrl()}/runsync?wait=1000`;
    const first = call('POST', url, { body: { input: {} } });
    await waitFor(async () => (await running!.harness.endpoint('ep').jobs()).length === 1, 'the first runsync to wait');
    const second = await call('POST', url, { body: { input: {} } });
    expect(second.status).toBe(429);
    expect((second.json as { error: { details: { reason: string } } }).error.details.reason).toBe('concurrency');
    expect(second.headers.get('retry-after')).toBe('1');
    clock.advance(1000);
    expect((await first).status).toBe(200);
    const third = call('POST', url, { body: { input: {} } });
    await waitFor(async () => (await running!.harness.endpoint('ep').jobs()).length === 2, 'the third runsync to wait');
    clock.advance(1000);
    expect((await third).status).toBe(200);
  });

  it('can be turned off', async () => {
    running = await startTestServer({ rateLimits: false });
    for (let i = 0; i < 5; i++) expect((await call('POST', `${running.endpointUrl()}/purge-queue`)).status).toBe(200);
  });
});
