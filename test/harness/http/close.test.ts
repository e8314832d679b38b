/**
 * Closing the server answers waiting requests at once instead of leaving them hanging:
 * /runsync with the job's current status, an OpenAI call with 503 SW_HARNESS_CLOSING
 * (its job cancelled). The harness itself stays usable.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/harness/index.js';
import { call, errorCode, startTestServer, waitUntil } from './helpers.js';

describe('close()', () => {
  it('answers waiting requests and stops listening', async () => {
    const running = await startTestServer({}, { clock: new ManualClock() });
    const endpoint = running.harness.endpoint('ep');
    const runsync = call('POST', `${running.endpointUrl()}/runsync?wait=300000`, { body: { input: {} } });
    const openai = call('POST', `${running.endpointUrl()}/openai/v1/chat/completions`, { body: { stream: true } });
    await waitUntil(async () => (await endpoint.jobs()).length === 2, 'both requests to wait');
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
});
