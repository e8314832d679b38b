import { describe, expect, it } from 'vitest';
import { JOB_ID_MAX_BYTES, JobBoard, JobBoardReader } from '../../../src/transports/watchdog/index.js';

describe('the job board shared with the watchdog thread', () => {
  it('shows claimed jobs to the reader with their deadline and start, and forgets released ones', () => {
    const board = new JobBoard(3);
    const reader = new JobBoardReader(board.buffer);
    expect(reader.jobs()).toEqual([]);
    const a = board.claim('job-a', 10_000, 5_000);
    const b = board.claim('jöb-b ✓', 20_000, 6_000);
    expect(a).toBeGreaterThanOrEqual(0);
    expect(b).toBeGreaterThanOrEqual(0);
    expect(reader.jobs().sort((x, y) => x.deadlineAt - y.deadlineAt)).toEqual([
      { slot: a, id: 'job-a', deadlineAt: 10_000, startedAt: 5_000 },
      { slot: b, id: 'jöb-b ✓', deadlineAt: 20_000, startedAt: 6_000 },
    ]);
    board.release(a);
    expect(reader.jobs()).toEqual([{ slot: b, id: 'jöb-b ✓', deadlineAt: 20_000, startedAt: 6_000 }]);
    // The freed slot is reused, and shows the new job only.
    const c = board.claim('c', 30_000, 7_000);
    expect(
      reader
        .jobs()
        .map((job) => job.id)
        .sort(),
    ).toEqual(['c', 'jöb-b ✓']);
    board.release(b);
    board.release(c);
    expect(reader.jobs()).toEqual([]);
  });

  it('answers -1 (not watched) when every slot is taken or the id is too long, and takes jobs again once one frees', () => {
    const board = new JobBoard(2);
    const reader = new JobBoardReader(board.buffer);
    const first = board.claim('one', 1, 0);
    board.claim('two', 2, 0);
    expect(board.claim('three', 3, 0)).toBe(-1);
    board.release(first);
    expect(board.claim('x'.repeat(JOB_ID_MAX_BYTES + 1), 4, 0)).toBe(-1);
    expect(board.claim('x'.repeat(JOB_ID_MAX_BYTES), 5, 0)).toBeGreaterThanOrEqual(0);
    expect(
      reader
        .jobs()
        .map((job) => job.deadlineAt)
        .sort(),
    ).toEqual([2, 5]);
  });

  it('keeps two attempts of one job apart: each its own slot, with its attempt', () => {
    const board = new JobBoard(3);
    const reader = new JobBoardReader(board.buffer);
    const first = board.claim('same-job', 1_000, 0, 1);
    const second = board.claim('same-job', 2_000, 500, 2);
    const plain = board.claim('no-attempt', 3_000, 0);
    expect(new Set([first, second, plain]).size).toBe(3);
    expect(reader.jobs().sort((x, y) => x.deadlineAt - y.deadlineAt)).toEqual([
      { slot: first, id: 'same-job', attempt: 1, deadlineAt: 1_000, startedAt: 0 },
      { slot: second, id: 'same-job', attempt: 2, deadlineAt: 2_000, startedAt: 500 },
      { slot: plain, id: 'no-attempt', deadlineAt: 3_000, startedAt: 0 },
    ]);
    board.release(first);
    expect(reader.jobs().map((job) => [job.id, job.attempt])).toEqual(expect.arrayContaining([['same-job', 2]]));
    expect(reader.jobs().some((job) => job.attempt === 1)).toBe(false);
  });

  it('carries the tick (the main thread last turn) and the fired flag, raised once', () => {
    const board = new JobBoard(1);
    const reader = new JobBoardReader(board.buffer);
    const before = Date.now();
    board.tick();
    expect(reader.lastTickAt()).toBeGreaterThanOrEqual(before - 1);
    expect(reader.lastTickAt()).toBeLessThanOrEqual(Date.now() + 1);
    expect(board.fired).toBe(false);
    expect(reader.markFired()).toBe(true);
    expect(reader.markFired()).toBe(false);
    expect(board.fired).toBe(true);
  });

  it('keeps the tick exact on a board made 25 days ago (an Int32 of ms since the board was made wraps after 24.8 days)', () => {
    const now = Date.UTC(2026, 0, 26, 12, 0, 0);
    let clock = now - 25 * 24 * 3_600_000;
    const board = new JobBoard(1, () => clock);
    const reader = new JobBoardReader(board.buffer);
    expect(reader.lastTickAt()).toBe(clock);
    clock = now;
    board.tick();
    expect(reader.lastTickAt()).toBe(now);
    // 40 days on, and a tick one second later: the blocked time the watchdog reads stays right.
    clock = now + 15 * 24 * 3_600_000;
    board.tick();
    expect(reader.lastTickAt()).toBe(clock);
    clock += 1_000;
    board.tick();
    expect(reader.lastTickAt()).toBe(clock);
  });
});
