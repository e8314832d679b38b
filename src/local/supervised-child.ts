/**
 * @module local/supervised-child
 * The worker process `--serve-api` supervises (SW_SUPERVISOR_PID set): when its
 * supervisor is gone (SIGKILLed, so it could not stop the child), nobody is left to take
 * its results, so it exits instead of polling a dead harness forever. It runs in its own
 * process group, so the terminal's Ctrl+C never reaches it directly. A worker process
 * a harness's launcher started (SW_HARNESS_PID set) is told when that harness is gone
 * (local/harness-gone.ts: it delivers what it finished to a harness that comes back, then exits).
 */
import type { Logger } from 'pino';
import { repeatEvery, systemClock } from '../clock/index.js';
import { processRuns, processStartTicks } from './process-runs.js';

/** How often the parent's pid is checked, ms. */
const ORPHAN_CHECK_MS = 1_000;

/** Exit 1 once the parent process is no longer `supervisorPid`. */
export function exitWhenOrphaned(supervisorPid: number, logger: Logger): void {
  const timer = repeatEvery(systemClock, ORPHAN_CHECK_MS, () => {
    if (process.ppid === supervisorPid) return;
    timer.cancel();
    logger.warn({ supervisorPid }, 'the --serve-api process that ran this worker is gone: exiting');
    logger.flush();
    process.exit(1);
  });
}

/**
 * Call `onGone` once process `harnessPid` no longer runs (a launched worker whose harness
 * was SIGKILLed: its shell, not the harness, is the worker's parent, so the pid is
 * watched, not the parent).
 */
export function watchHarnessPid(harnessPid: number, logger: Logger, onGone: (why: string) => void): void {
  // Read now, while the harness surely runs (it just started this worker): a later process given its pid is not taken for it.
  const startTicks = processStartTicks(harnessPid);
  const timer = repeatEvery(systemClock, ORPHAN_CHECK_MS, () => {
    if (processRuns(harnessPid, startTicks)) return;
    timer.cancel();
    logger.debug({ harnessPid }, 'harness pid gone');
    onGone(`the harness that launched this worker (pid ${harnessPid}) is gone`);
  });
}
