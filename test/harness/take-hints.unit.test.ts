import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock/index.js';
import { GRACE_MS, TakeHints } from '../../src/harness/core/take-hints.js';

describe('TakeHints', () => {
  it('wakes the takers a moment after a hinted job is queued elsewhere, unless its take is told first', () => {
    const clock = new ManualClock();
    let wakes = 0;
    const hints = new TakeHints(clock, () => wakes++);
    hints.hinted('taken');
    hints.hinted('left');
    hints.taken('taken');
    clock.advance(GRACE_MS - 1);
    expect(wakes).toBe(0);
    clock.advance(1);
    // Only the job whose take was not told wakes them.
    expect(wakes).toBe(1);
    expect(clock.pendingTimers).toBe(0);
  });

  it('wakes at once for every hint still waiting when events may have been missed, and once', () => {
    const clock = new ManualClock();
    let wakes = 0;
    const hints = new TakeHints(clock, () => wakes++);
    hints.flush();
    expect(wakes).toBe(0);
    hints.hinted('a');
    hints.hinted('b');
    hints.flush();
    expect(wakes).toBe(1);
    expect(clock.pendingTimers).toBe(0);
  });
});
