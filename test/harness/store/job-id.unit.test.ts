/**
 * Job ids as every store makes them: a UUID, `sync-` in front for /runsync, never the same twice.
 */
import { describe, expect, it } from 'vitest';
import { newJobId } from '../../../src/harness/store/job-id.js';

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}';

describe('newJobId', () => {
  it('is a version 4 UUID, with sync- in front for /runsync, and unique', () => {
    expect(newJobId(false)).toMatch(new RegExp(`^${UUID}$`));
    expect(newJobId(true)).toMatch(new RegExp(`^sync-${UUID}$`));
    const ids = new Set(Array.from({ length: 1_000 }, (_, i) => newJobId(i % 2 === 0)));
    expect(ids.size).toBe(1_000);
  });
});
