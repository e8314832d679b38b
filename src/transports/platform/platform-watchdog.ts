/**
 * @module transports/platform/platform-watchdog
 * The platform transport's heartbeat and deadline watchdog thread (../watchdog/), set up
 * from the platform variables: pings to RUNPOD_WEBHOOK_PING, failed pings logged (the
 * first of a run, then every tenth) and counted; with `watchdog` options, a blocked job
 * past its deadline plus grace is posted to the job-done URL by the thread itself.
 */
import type { Logger } from 'pino';
import { RUNTIME_VERSION } from '../../version.js';
import { JOB_ID_PLACEHOLDER, Watchdog } from '../watchdog/index.js';
import type { DeliveryPolicy } from './deliver.js';
import type { PlatformTransportMetrics, PlatformWatchdogOptions } from './options.js';
import { urlForLog, type PlatformUrls } from './urls.js';

/** Least default of eventLoopBlockedMs: 3 ping intervals, but never under this, ms (a short ping interval must not requeue a job over an ordinary pause). */
export const MIN_DEFAULT_UNCLAIM_MS = 10_000;
/**
 * The default of eventLoopBlockedMs: while the main thread has been blocked this long,
 * the heartbeat stops listing the jobs. Three ping intervals, at least MIN_DEFAULT_UNCLAIM_MS.
 */
export function defaultBlockedUnclaimMs(pingIntervalMs: number): number {
  return Math.max(3 * pingIntervalMs, MIN_DEFAULT_UNCLAIM_MS);
}

/** Log the first failure of a run of failed pings and then every tenth, so an outage does not flood the log. */
const LOG_PING_FAILURE_EVERY = 10;

export interface PlatformWatchdogSetup {
  readonly urls: PlatformUrls;
  readonly workerId: string;
  readonly apiKey: string | undefined;
  readonly pingIntervalMs: number;
  /** Run the heartbeat (the transport's `heartbeat` setting). */
  readonly heartbeat: boolean;
  readonly watchdog: PlatformWatchdogOptions | undefined;
  readonly deliveryPolicy: DeliveryPolicy;
  readonly logger: Logger;
  readonly metrics: PlatformTransportMetrics | undefined;
  /** A ping refused with 401/403: the transport reports a refused key once, instead of a warning per ping. */
  readonly onKeyRefused?: (status: number) => void;
}

/** The thread's main side, or undefined when there is neither a heartbeat nor a watchdog to run. */
export function createPlatformWatchdog(setup: PlatformWatchdogSetup): Watchdog | undefined {
  const { urls, logger, metrics, pingIntervalMs: intervalMs, watchdog: watch } = setup;
  const ping = urls.ping;
  const apiKey = setup.apiKey !== undefined ? { apiKey: setup.apiKey } : {};
  const heartbeat =
    ping !== undefined && setup.heartbeat ? { url: ping, ...apiKey, intervalMs, timeoutMs: Math.max(1_000, intervalMs), version: RUNTIME_VERSION } : undefined;
  if (!heartbeat && !watch) return undefined;
  const blockedUnclaimMs = watch && heartbeat ? (watch.blockedUnclaimMs ?? defaultBlockedUnclaimMs(intervalMs)) : undefined;
  return new Watchdog({
    logger,
    timeoutGraceMs: watch?.timeoutGraceMs ?? 0,
    ...(watch?.slots !== undefined ? { slots: watch.slots } : {}),
    ...(heartbeat ? { heartbeat } : {}),
    ...(blockedUnclaimMs !== undefined ? { blockedUnclaimMs } : {}),
    // The thread adds each job's `attempt=N` to this URL, as the transport's own result posts carry it.
    ...(watch ? { fire: { kind: 'platform' as const, doneUrl: urls.done(JOB_ID_PLACEHOLDER, false), ...apiKey, retry: setup.deliveryPolicy } } : {}),
    origin: { workerId: setup.workerId, hostname: watch?.hostname ?? 'unknown', version: RUNTIME_VERSION },
    onPingFailure: ({ consecutive, status, message }) => {
      metrics?.heartbeatFailuresTotal.inc();
      if ((status === 401 || status === 403) && setup.onKeyRefused) {
        setup.onKeyRefused(status);
        return;
      }
      if (consecutive === 1 || consecutive % LOG_PING_FAILURE_EVERY === 0) {
        logger.warn(
          { url: urlForLog(ping ?? ''), consecutiveFailures: consecutive, ...(status !== undefined ? { status } : {}), error: message },
          'heartbeat ping failed',
        );
      }
    },
  });
}
