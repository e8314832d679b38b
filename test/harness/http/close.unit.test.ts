/**
 * Closing the server answers waiting requests at once instead of leaving them hanging:
 * /runsync with the job's current status, an OpenAI call with 503 SW_HARNESS_CLOSING
 * (its job cancelled). The harness itself stays usable.
 */
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/harness/index.js';
import { call, errorCode, startTestServer, waitFor } from '../../kit/index.js';

describe('close()', () => {
  it('answers waiting requests and stops listening', async () => {
    const running = await startTestServer({}, { clock: new ManualClock() });
    const endpoint = running.harness.endpoint('ep');
    const runsync = call('POST', `${running.endpointUrl()}/runsync?wait=300000`, { body: { input: {} } });
    const openai = call('POST', `${running.endpointUrl()}/openai/v1/chat/completions`, { body: { stream: true } });
    await waitFor(async () => (await endpoint.jobs()).length === 2, 'both requests to wait');
    await running.server.close();
    const [sync, ai] = await Promise.all([runsync, openai]);
    expect(sync.status).toBe(200);
    expect(sync.json).toMatchObject({ status: 'IN_QUEUE' });
    expect(ai.status).toBe(503);
    expect(errorCode(ai)).toBe('SW_HARNESS_CLOSING');
    expect((await endpoint.jobs()).map((job) => job.status).sort()).toEqual(['CANCELLED', 'IN_QUEUE']);
    await expect(call('GET', `${running.endpointUrl()}/health`)).rejects.toThrow();
    await running.close();
  });

  it('does not wait for a connection that never sent a request (a browser preconnect): Node would hold close for its 60 s headers timeout', async () => {
    const running = await startTestServer();
    const socket = connect(running.server.port, '127.0.0.1');
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    const socketClosed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    // A bound far below Node's headers timeout: before the fix close waited the whole 60 s.
    const closed = await Promise.race([
      running.server.close().then(() => 'closed'),
      new Promise((resolve) => setTimeout(() => resolve('still waiting'), 15_000).unref()),
    ]);
    expect(closed).toBe('closed');
    await socketClosed;
    expect(socket.destroyed).toBe(true);
    await running.close();
  });
});
