/**
 * @module transports/platform/unhealthy-report
 * The one-time report of a failed start-up check (GPU, init):
 * `GET <ping>?status=unhealthy&check=<check>&reason=<text>`, tried a few times with a
 * short backoff. It never rejects: the worker exits 1 after it either way.
 */
import type { Logger } from 'pino';
import { backoffDelay, sleep, type Clock } from '../../clock/index.js';
import type { PlatformHttp } from './http-client.js';
import { appendParams } from './urls.js';

/** Longest `reason` of an unhealthy report, in characters (the platform's limit). */
export const UNHEALTHY_REASON_MAX = 256;
/** Tries of one report before the worker gives up on it. */
const UNHEALTHY_ATTEMPTS = 3;

export interface UnhealthyReportTarget {
  readonly http: PlatformHttp;
  /** RUNPOD_WEBHOOK_PING; undefined: nothing to report to (logged). */
  readonly ping: string | undefined;
  /** Bound of each try, ms. */
  readonly timeoutMs: number;
  readonly logger: Logger;
  /** Times the backoff between attempts; default the system clock. */
  readonly clock?: Clock;
}

/** Report `check` failed with `reason` (cut to UNHEALTHY_REASON_MAX code points); never rejects. */
export async function sendUnhealthyReport(target: UnhealthyReportTarget, check: string, reason: string): Promise<void> {
  const { http, ping, timeoutMs, logger } = target;
  if (ping === undefined) {
    logger.warn({ check, reason }, 'cannot report unhealthy: RUNPOD_WEBHOOK_PING is not set');
    return;
  }
  const url = appendParams(ping, { status: 'unhealthy', check, reason: Array.from(reason).slice(0, UNHEALTHY_REASON_MAX).join('') });
  for (let attempt = 1; attempt <= UNHEALTHY_ATTEMPTS; attempt++) {
    try {
      const answer = await http.get(url, { timeoutMs });
      if (answer.status >= 200 && answer.status < 300) return;
      logger.warn({ status: answer.status, attempt }, 'unhealthy report was not accepted');
    } catch (error) {
      logger.warn({ err: error, attempt }, 'unhealthy report failed');
    }
    if (attempt < UNHEALTHY_ATTEMPTS) await sleep(backoffDelay(attempt, { minMs: 200, maxMs: 2_000 }), undefined, target.clock);
  }
}
