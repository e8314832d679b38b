/**
 * The dashboard's history of workers that left (packages/platform/src/harness/dashboard/
 * worker-history.ts), on a real in-process Harness: a worker that takes and finishes jobs
 * and is then removed is listed with its jobs and times; one that comes back leaves the
 * list; a job ended after its worker left counts for it without bringing it back; the list
 * keeps the most recent departures only.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Harness } from '../../src/harness/index.js';
import { WorkerHistory } from '../../packages/platform/src/harness/dashboard/worker-history.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const ERROR = { error_type: 'Error', error_message: 'no', hostname: 'h', worker_id: 'w', runtime_version: 't' };

describe('WorkerHistory', () => {
  it('lists a worker that left with the jobs it finished, drops one that came back, keeps the latest only', async () => {
    harness = new Harness();
    const endpoint = harness.endpoint('history');
    const history = new WorkerHistory(harness, 2);
    history.start(60_000);
    try {
      await endpoint.workers.touch('w1');
      await history.sample();
      for (let i = 0; i < 2; i++) {
        const { id } = await endpoint.submit({ input: { i } });
        const [job] = await endpoint.tryTake('w1', 1);
        expect(job?.id).toBe(id);
        await endpoint.complete(id, 'w1', i === 0 ? { kind: 'output', output: i } : { kind: 'error', error: ERROR });
      }
      expect(history.jobsDone('history', 'w1')).toBe(2);
      await endpoint.workers.remove('w1');
      await history.sample();
      expect(history.departed()).toEqual([expect.objectContaining({ id: 'w1', endpointId: 'history', jobsDone: 2 })]);

      // Back again: no longer listed as gone.
      await endpoint.workers.touch('w1');
      await history.sample();
      expect(history.departed()).toEqual([]);

      // Three leave; two are kept, the most recent first.
      for (const id of ['a', 'b', 'c']) {
        await endpoint.workers.touch(id);
        await history.sample();
        await endpoint.workers.remove(id);
        await history.sample();
      }
      expect(history.departed().map((w) => w.id)).toEqual(['c', 'b']);
    } finally {
      history.stop();
    }
  });
});
