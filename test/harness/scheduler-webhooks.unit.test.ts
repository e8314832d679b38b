/**
 * Webhook retries on the harness's clock (a ManualClock): the spec's 10 s between
 * attempts, with no real time waited for them.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/harness/index.js';
import { WebhookSender, type WebhookOutcome } from '../../packages/platform/src/harness/webhooks/index.js';
import { startReceiver, waitFor, type WebhookReceiver } from '../kit/index.js';

const receivers: WebhookReceiver[] = [];
afterEach(async () => {
  for (const receiver of receivers.splice(0)) await receiver.close();
});

describe('WebhookSender on a ManualClock', () => {
  it("retries a failed delivery after the spec's 10 s of the clock, twice at most, and stops at the first 200", async () => {
    const receiver = await startReceiver((attempt) => (attempt <= 2 ? 500 : 200));
    receivers.push(receiver);
    const clock = new ManualClock();
    const outcomes: WebhookOutcome[] = [];
    const sender = new WebhookSender({ clock, onOutcome: (outcome) => outcomes.push(outcome) });
    expect(sender.settings).toMatchObject({ retryDelayMs: 10_000, attempts: 3 });
    sender.deliver(receiver.url, { id: 'j' }, { jobId: 'j', endpointId: 'ep' });
    for (let attempt = 1; attempt <= 2; attempt++) {
      // The failed attempt's answer arms the retry on the clock.
      await waitFor(() => receiver.received.length === attempt && clock.pendingTimers === 1, `attempt ${attempt} and its retry armed`);
      clock.advance(9_999);
      expect(receiver.received).toHaveLength(attempt);
      clock.advance(1);
    }
    await sender.whenIdle();
    expect(receiver.received).toHaveLength(3);
    expect(outcomes).toEqual([{ url: receiver.url, jobId: 'j', delivered: true, attempts: 3, last: 200 }]);
    expect(clock.pendingTimers).toBe(0);
    sender.close();
  });

  it('gives up after the third attempt: no timer is left armed', async () => {
    const receiver = await startReceiver(() => 503);
    receivers.push(receiver);
    const clock = new ManualClock();
    const outcomes: WebhookOutcome[] = [];
    const sender = new WebhookSender({ clock, onOutcome: (outcome) => outcomes.push(outcome) });
    sender.deliver(receiver.url, {}, { jobId: 'j', endpointId: 'ep' });
    for (let attempt = 1; attempt <= 2; attempt++) {
      await waitFor(() => receiver.received.length === attempt && clock.pendingTimers === 1, `attempt ${attempt} and its retry armed`);
      clock.advance(10_000);
    }
    await sender.whenIdle();
    expect(outcomes).toEqual([{ url: receiver.url, jobId: 'j', delivered: false, attempts: 3, last: 503 }]);
    expect(clock.pendingTimers).toBe(0);
    clock.advance(60_000);
    expect(receiver.received).toHaveLength(3);
    sender.close();
  });
});
