/**
 * An idle worker's watchdog rests (issue 26, idle is free): with no job watched, the
 * main thread stops ticking and the thread stops checking; a watched job wakes both, and
 * after IDLE_TICKS_BEFORE_REST ticks with none they rest again. Read on the real thread
 * through the board's tick, which only the main side's ticker moves.
 */
import { pino } from 'pino';
import { afterEach, expect, it } from 'vitest';
import { sleep } from '../../../src/clock/index.js';
import { IDLE_TICKS_BEFORE_REST, JobBoardReader, TICK_INTERVAL_MS, Watchdog } from '../../../src/transports/watchdog/index.js';
import { waitFor } from '../../kit/index.js';

let watchdog: Watchdog | undefined;
afterEach(async () => {
  await watchdog?.stop();
  watchdog = undefined;
});

/** Whether the board's tick moves over a few tick intervals. */
async function ticking(reader: JobBoardReader): Promise<boolean> {
  const before = reader.lastTickAt();
  await sleep(TICK_INTERVAL_MS * 4);
  return reader.lastTickAt() !== before;
}

it('ticks only while a job is watched, and rests again once none is', async () => {
  watchdog = new Watchdog({
    logger: pino({ level: 'silent' }),
    timeoutGraceMs: 1_000,
    slots: 4,
    origin: { workerId: 'rest-test', hostname: 'localhost', version: 'test' },
    jsonLogs: false,
  });
  expect(watchdog.start()).toBe(true);
  await watchdog.ready;
  const reader = new JobBoardReader(watchdog.board.buffer);
  expect(await ticking(reader)).toBe(false);

  const handle = watchdog.watch('job-1', Date.now() + 60_000);
  expect(await ticking(reader)).toBe(true);
  watchdog.unwatch(handle);
  // It keeps ticking for IDLE_TICKS_BEFORE_REST ticks (back-to-back jobs do not switch it per job), then rests.
  await waitFor(async () => !(await ticking(reader)), 'the watchdog resting after its last job', IDLE_TICKS_BEFORE_REST * TICK_INTERVAL_MS + 5_000, 1);

  // A job that runs unwatched (every slot taken) but is in the heartbeat's list keeps it awake too.
  watchdog.setJobs(['job-2']);
  expect(await ticking(reader)).toBe(true);
  watchdog.setJobs([]);
  await waitFor(async () => !(await ticking(reader)), 'the watchdog resting once the list is empty', IDLE_TICKS_BEFORE_REST * TICK_INTERVAL_MS + 5_000, 1);
});
