/**
 * @module local/harness-watch
 * A worker container a harness's launcher started (SW_HARNESS_GONE_AFTER_MS set) exits
 * once its harness has been unreachable for that long: every second it opens (and
 * closes) a TCP connection to the harness's host and port, taken from its worker URLs; a
 * run of refused or timed-out connections as long as the window means the harness is
 * gone (SIGKILLed, so it could not stop the container), and nobody is left to take
 * results. A harness back within the window (restarted on the same port) keeps it; the
 * restarted harness removes the containers its previous run left (docker-backend.ts).
 */
import { connect } from 'node:net';
import type { Logger } from 'pino';
import { repeatEvery, systemClock } from '../clock/index.js';

/** How often the harness is probed, and the longest one probe waits, ms. */
const PROBE_EVERY_MS = 1_000;

/** Whether a TCP connection to host:port opens within `timeoutMs`. */
function reachable(host: string, port: number, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (answer: boolean): void => {
      socket.destroy();
      resolve(answer);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** Exit 1 once no connection to the harness at `harnessUrl` has opened for `windowMs`. */
export function exitWhenHarnessUnreachable(harnessUrl: string, windowMs: number, logger: Logger): void {
  let url: URL;
  try {
    url = new URL(harnessUrl);
  } catch {
    logger.warn({ harnessUrl }, 'SW_HARNESS_GONE_AFTER_MS is set but the worker URL is not a URL: the harness is not watched');
    return;
  }
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  let lastReachedAt = systemClock.now();
  let probing = false;
  const timer = repeatEvery(systemClock, PROBE_EVERY_MS, () => {
    if (probing) return;
    probing = true;
    void reachable(host, port, PROBE_EVERY_MS).then((ok) => {
      probing = false;
      const now = systemClock.now();
      if (ok) {
        lastReachedAt = now;
        return;
      }
      if (now - lastReachedAt < windowMs) return;
      timer.cancel();
      logger.warn({ harness: `${host}:${port}`, windowMs }, `the harness that launched this worker has been unreachable for ${windowMs} ms: exiting`);
      logger.flush();
      process.exit(1);
    });
  });
}
