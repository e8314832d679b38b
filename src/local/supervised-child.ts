/**
 * @module local/supervised-child
 * The worker process `--serve-api` supervises (SW_SUPERVISOR_PID set): when its
 * supervisor is gone (SIGKILLed, so it could not stop the child), nobody is left to take
 * its results, so it exits instead of polling a dead harness forever. It runs in its own
 * process group, so the terminal's Ctrl+C never reaches it directly.
 */
import type { Logger } from 'pino';
import { repeatEvery, systemClock } from '../clock/index.js';

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
