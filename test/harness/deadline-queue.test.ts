/**
 * DeadlineQueue: many deadlines on one clock timer fire exactly as as many clock timers
 * would: in due order, ties in the order they were set, never after cancel, and never
 * more than one clock timer armed.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/harness/clock.js';
import { DeadlineQueue } from '../../src/harness/deadline-queue.js';

function queue(): { clock: ManualClock; q: DeadlineQueue<string>; fired: string[] } {
  const clock = new ManualClock();
  const fired: string[] = [];
  const q = new DeadlineQueue<string>(clock, (item, tag) => fired.push(`${item}:${tag}`));
  return { clock, q, fired };
}

describe('DeadlineQueue', () => {
  it('fires in due order, ties in the order set, each at its time, on one clock timer', () => {
    const { clock, q, fired } = queue();
    q.schedule(300, 'c', 't');
    q.schedule(100, 'a', 't');
    q.schedule(200, 'b1', 't');
    q.schedule(200, 'b2', 't');
    expect(clock.pendingTimers).toBe(1);
    clock.advance(99);
    expect(fired).toEqual([]);
    clock.advance(1);
    expect(fired).toEqual(['a:t']);
    clock.advance(100);
    expect(fired).toEqual(['a:t', 'b1:t', 'b2:t']);
    clock.advance(1_000);
    expect(fired).toEqual(['a:t', 'b1:t', 'b2:t', 'c:t']);
    expect(q.size).toBe(0);
    expect(clock.pendingTimers).toBe(0);
  });

  it('a cancelled deadline never fires; cancelling twice, or after firing, changes nothing', () => {
    const { clock, q, fired } = queue();
    const a = q.schedule(10, 'a', 't');
    const b = q.schedule(20, 'b', 't');
    a.cancel();
    a.cancel();
    expect(q.size).toBe(1);
    clock.advance(30);
    b.cancel();
    expect(fired).toEqual(['b:t']);
    expect(q.size).toBe(0);
  });

  it('re-arms for a deadline set earlier than the one armed for', () => {
    const { clock, q, fired } = queue();
    q.schedule(1_000, 'late', 't');
    q.schedule(10, 'early', 't');
    expect(clock.pendingTimers).toBe(1);
    clock.advance(10);
    expect(fired).toEqual(['early:t']);
  });

  it('deadlines set or cancelled while firing are honoured', () => {
    const clock = new ManualClock();
    const fired: string[] = [];
    let other: { cancel(): void } | undefined;
    const q: DeadlineQueue<string> = new DeadlineQueue<string>(clock, (item) => {
      fired.push(item);
      if (item === 'first') {
        q.schedule(0, 'now', 't');
        q.schedule(50, 'later', 't');
        other?.cancel();
      }
    });
    q.schedule(10, 'first', 't');
    other = q.schedule(20, 'cancelled-by-first', 't');
    clock.advance(10);
    expect(fired).toEqual(['first', 'now']);
    clock.advance(100);
    expect(fired).toEqual(['first', 'now', 'later']);
  });

  it('keeps its order when cancelled deadlines are dropped in bulk', () => {
    const { clock, q, fired } = queue();
    const handles = Array.from({ length: 500 }, (_, i) => q.schedule(1_000 - i, `j${i}`, 't'));
    for (let i = 0; i < 500; i += 2) handles[i]?.cancel();
    expect(q.size).toBe(250);
    clock.advance(1_000);
    const expected = Array.from({ length: 500 }, (_, i) => i)
      .filter((i) => i % 2 === 1)
      .reverse()
      .map((i) => `j${i}:t`);
    expect(fired).toEqual(expected);
  });

  it('clear drops every deadline and the clock timer, and the queue stays usable', () => {
    const { clock, q, fired } = queue();
    const a = q.schedule(10, 'a', 't');
    q.clear();
    a.cancel();
    expect(clock.pendingTimers).toBe(0);
    q.schedule(5, 'b', 't');
    clock.advance(20);
    expect(fired).toEqual(['b:t']);
  });
});
