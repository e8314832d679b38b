/**
 * Issue 46 item 3: the idle compaction's full step asks V8 for memory-reducing collections
 * where its `gc` takes them (V8 12 on: Node 22, 24, 26), and two plain ones on Node 20's V8,
 * which reads any options object as a young collection. The system test
 * (collect-for-memory.system.test.ts) runs the real `gc` under each supported line.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { describe, expect, it } from 'vitest';
import {
  LAST_RESORT_FROM_V8,
  MEMORY_COLLECTION_CHANNEL,
  collectForMemory,
  type CollectionOptions,
  type MemoryCollection,
} from '../../src/metrics/garbage-collector.js';

function calls(version: string): Array<CollectionOptions | undefined> {
  const made: Array<CollectionOptions | undefined> = [];
  collectForMemory((options) => made.push(options), version);
  return made;
}

describe('collectForMemory', () => {
  it('asks V8 12 and later for a last-resort full collection, once (it repeats itself until one frees nothing more)', () => {
    expect(LAST_RESORT_FROM_V8).toBe(12);
    expect(calls('12.4.254.21-node.33')).toEqual([{ type: 'major', flavor: 'last-resort' }]);
    expect(calls('13.6.233.17-node.63')).toEqual([{ type: 'major', flavor: 'last-resort' }]);
    expect(calls('14.6.202.34-node.40')).toEqual([{ type: 'major', flavor: 'last-resort' }]);
  });

  it("makes two plain calls on Node 20's V8 11, or a version it cannot read (a plain call is a full collection on every V8)", () => {
    expect(calls('11.3.244.8-node.38')).toEqual([undefined, undefined]);
    expect(calls('v8')).toEqual([undefined, undefined]);
  });

  it('publishes each call on its diagnostics channel once the collections returned, with the used heap before and after', () => {
    const published: MemoryCollection[] = [];
    const listener = (message: unknown): void => void published.push(message as MemoryCollection);
    subscribe(MEMORY_COLLECTION_CHANNEL, listener);
    try {
      let collected = 0;
      collectForMemory(() => collected++, '13.6.233.17-node.63');
      collectForMemory(() => collected++, '11.3.244.8-node.38');
      expect(collected).toBe(3);
      expect(published.map((message) => message.flavor)).toEqual(['last-resort', 'regular']);
      for (const message of published) {
        expect(message.startedAt).toBeGreaterThan(0);
        expect(message.usedBefore).toBeGreaterThan(0);
        expect(message.usedAfter).toBeGreaterThan(0);
      }
    } finally {
      unsubscribe(MEMORY_COLLECTION_CHANNEL, listener);
    }
  });
});
