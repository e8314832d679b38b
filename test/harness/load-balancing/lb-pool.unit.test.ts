/**
 * The pool of one load-balancing endpoint: round-robin over healthy workers with room,
 * and the reason the 400 gives when none has room.
 */
import { describe, expect, it } from 'vitest';
import { LbPool } from '../../../packages/platform/src/harness/load-balancing/index.js';

function poolOf(states: Array<'healthy' | 'initializing' | 'unhealthy'>, concurrency = 1): LbPool {
  const pool = new LbPool('ep');
  states.forEach((state, index) => {
    const worker = pool.register({ id: `w${index}`, url: `http://127.0.0.1:${9000 + index}`, healthUrl: `http://127.0.0.1:${9000 + index}`, concurrency }, 0);
    pool.setState(worker, state, 1);
  });
  return pool;
}

describe('LbPool.describe', () => {
  it('says there is no healthy worker when none is healthy (not that they are all at their concurrency)', () => {
    expect(new LbPool('ep').describe()).toBe('no worker is registered');
    expect(poolOf(['unhealthy', 'initializing']).describe()).toBe('no healthy worker: 1 initializing, 1 unhealthy');
  });

  it('says the healthy ones are all at their concurrency when they are', () => {
    const pool = poolOf(['healthy', 'healthy', 'unhealthy']);
    const first = pool.pick()!;
    first.inFlight++;
    const second = pool.pick()!;
    second.inFlight++;
    expect(second).not.toBe(first);
    expect(pool.pick()).toBeUndefined();
    expect(pool.describe()).toBe('2 healthy, all at their concurrency; 0 initializing, 1 unhealthy');
  });
});
