/**
 * Stream chunks that arrive out of order (a worker with several chunk posts in flight,
 * issue 46 item 4): the harness core holds a chunk that came before one it follows and
 * stores it once that one is, so /stream reads them in index order and a post's answer
 * still means "stored". Bounded, and a held chunk ends with its job (cancel, requeue).
 * In process, on the memory store.
 */
import { describe, expect, it } from 'vitest';
import { Harness, ManualClock, type EndpointJobs } from '../../src/harness/index.js';
import { MAX_CHUNKS_AHEAD, MAX_HELD_CHUNKS } from '../../src/harness/core/chunk-order.js';
import { parseJobRequest } from '../../src/job/index.js';
import type { PostAck } from '../../src/harness/store/job-store.js';
import { waitFor } from '../kit/index.js';

async function running(): Promise<{ endpoint: EndpointJobs; id: string }> {
  const harness = new Harness({ clock: new ManualClock() });
  const endpoint = harness.endpoint('ep');
  const { id } = await endpoint.submit(parseJobRequest({ input: { n: 1 } }));
  const [job] = await endpoint.tryTake('w1', 1);
  expect(job?.id).toBe(id);
  return { endpoint, id };
}

const chunk = (index: number) => ({ output: { n: index }, metrics: { stream_index: index } });

/** A post and whether it was answered yet. */
function post(endpoint: EndpointJobs, id: string, index: number, attempt?: number): { ack: Promise<PostAck>; answered: () => boolean } {
  let answered = false;
  const ack = endpoint.postChunk(id, 'w1', chunk(index), attempt).finally(() => (answered = true));
  return { ack, answered: () => answered };
}

const outputs = async (endpoint: EndpointJobs, id: string) => (await endpoint.readStream(id)).stream.map((c) => c.output);

describe('chunks posted out of order', () => {
  it('reach the stream in index order, each post answered only once its chunk and those before it are stored', async () => {
    const { endpoint, id } = await running();
    const third = post(endpoint, id, 2);
    const second = post(endpoint, id, 1);
    // Nothing before them came: held, unanswered, nothing stored.
    expect(await outputs(endpoint, id)).toEqual([]);
    expect(third.answered() || second.answered()).toBe(false);
    expect(await post(endpoint, id, 0).ack).toEqual({ applied: true });
    expect(await second.ack).toEqual({ applied: true });
    expect(await third.ack).toEqual({ applied: true });
    expect(await outputs(endpoint, id)).toEqual([{ n: 0 }, { n: 1 }, { n: 2 }]);
  });

  it('stores a retried post once, held or not: the second answer is duplicate', async () => {
    const { endpoint, id } = await running();
    expect(await post(endpoint, id, 0).ack).toEqual({ applied: true });
    expect(await post(endpoint, id, 0).ack).toMatchObject({ applied: false, reason: 'duplicate' });
    // Chunk 2 posted twice while 1 is missing (its first post's answer was lost, say).
    const first = post(endpoint, id, 2);
    const retried = post(endpoint, id, 2);
    await post(endpoint, id, 1).ack;
    const acks = await Promise.all([first.ack, retried.ack]);
    expect(acks.filter((ack) => ack.applied)).toHaveLength(1);
    expect(acks.filter((ack) => !ack.applied && ack.reason === 'duplicate')).toHaveLength(1);
    expect(await outputs(endpoint, id)).toEqual([{ n: 0 }, { n: 1 }, { n: 2 }]);
  });

  it('answers a chunk too far ahead at once (ahead, with the index expected), and holds nothing for it', async () => {
    const { endpoint, id } = await running();
    expect(await post(endpoint, id, MAX_CHUNKS_AHEAD + 1).ack).toEqual({ applied: false, reason: 'ahead', status: 'IN_PROGRESS', expected: 0 });
    expect(await post(endpoint, id, 0).ack).toEqual({ applied: true });
    expect(await outputs(endpoint, id)).toEqual([{ n: 0 }]);
  });

  it('holds at most MAX_HELD_CHUNKS a job: one more is answered ahead at once; the held ones are stored once the first comes', async () => {
    const { endpoint, id } = await running();
    const held = Array.from({ length: MAX_HELD_CHUNKS }, (_, n) => post(endpoint, id, n + 1));
    // The memory store answers in call order: the 64 are held before this one's answer is read.
    expect(await post(endpoint, id, 5).ack).toMatchObject({ applied: false, reason: 'ahead', expected: 0 });
    expect(await post(endpoint, id, 0).ack).toEqual({ applied: true });
    for (const one of held) expect(await one.ack).toEqual({ applied: true });
    expect((await outputs(endpoint, id)).map((output) => (output as { n: number }).n)).toEqual(Array.from({ length: MAX_HELD_CHUNKS + 1 }, (_, n) => n));
  });

  it('cancelled mid-window: the held chunk is answered not applied, and every chunk acked before is kept', async () => {
    const { endpoint, id } = await running();
    expect(await post(endpoint, id, 0).ack).toEqual({ applied: true });
    expect(await post(endpoint, id, 1).ack).toEqual({ applied: true });
    const held = post(endpoint, id, 3);
    expect(await outputs(endpoint, id)).toEqual([{ n: 0 }, { n: 1 }]);
    await endpoint.cancel(id);
    expect(await held.ack).toMatchObject({ applied: false, reason: 'not_held_by_worker' });
    const view = await endpoint.readStream(id);
    expect(view.status).toBe('CANCELLED');
    expect(view.stream).toEqual([]); // read above: nothing new, nothing lost or added after
    expect((await endpoint.find(id))?.chunkCount).toBe(2);
  });

  it("a requeue mid-window (the worker lost): attempt 1's held chunk is answered, not applied", async () => {
    const { endpoint, id } = await running();
    expect(await post(endpoint, id, 0, 1).ack).toEqual({ applied: true });
    const held = post(endpoint, id, 2, 1);
    expect(await endpoint.requeueWorkerJobs('w1')).toEqual([id]);
    await waitFor(() => held.answered(), "attempt 1's held chunk to be answered");
    expect(await held.ack).toMatchObject({ applied: false });
  });
});
