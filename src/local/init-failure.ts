/**
 * @module local/init-failure
 * A failed start-up phase in the dry run and `--serve-api`: the same few lines on stderr
 * as any other start-up error (code and message, the fix, where the stack is), the
 * stack only with `--verbose` or a debug log level. An init stopped by a signal prints
 * nothing: that is a clean stop.
 */
import type { Logger } from 'pino';
import { systemClock } from '../clock/index.js';
import { formatStartupError, wantsStack, type InitOutcome } from '../worker/index.js';

/** Print the failure after the log lines already written (the log's stream is asynchronous: flushed first, at most 1 s). */
export async function printInitFailure(outcome: InitOutcome<unknown>, logger: Logger): Promise<void> {
  if (outcome.ok || outcome.end === 'aborted') return;
  await new Promise<void>((resolve) => {
    systemClock.setTimer(1_000, resolve);
    logger.flush(() => resolve());
  });
  process.stderr.write(formatStartupError(outcome.error, wantsStack(process.argv.slice(2), process.env, logger.level)));
}
