/**
 * @module local/harness-watch
 * A worker container a harness's launcher started (SW_HARNESS_GONE_AFTER_MS set) is told
 * once its harness has been unreachable for that long: every second it opens (and
 * closes) a TCP connection to the harness's host and port, taken from its worker URLs; a
 * run of refused or timed-out connections as long as the window means the harness is
 * gone (SIGKILLed, so it could not stop the container). The worker then takes no new
 * job and keeps its results for a harness that comes back on the same address, for a
 * bounded time (local/harness-gone.ts). A harness back within the window keeps it
 * serving; the restarted harness removes the containers its previous run left
 * (docker-backend.ts).
 */
import { connect } from 'node:net';
import type { Logger } from 'pino';
import { repeatEvery, systemClock } from '../clock/index.js';

/** How often the harness is probed, and the longest one probe waits, ms. */
const PROBE_EVERY_MS = 1_000;

/** Whether a TCP connection to host:port opens within `timeoutMs`. */
export function reachable(host: string, port: number, timeoutMs: number): Promise<boolean> {
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

/** The host and port of a harness's worker URL, or undefined when it is not a URL. */
export function harnessAddress(harnessUrl: string): { host: string; port: number } | undefined {
  let url: URL;
  try {
    url = new URL(harnessUrl);
  } catch {
    return undefined;
  }
  return { host: url.hostname.replace(/^\[|\]$/g, ''), port: Number(url.port || (url.protocol === 'https:' ? 443 : 80)) };
}

/** Call `onGone` once no connection to the harness at `harnessUrl` has opened for `windowMs`. */
export function watchHarnessReachable(harnessUrl: string, windowMs: number, logger: Logger, onGone: (why: string) => void): void {
  const address = harnessAddress(harnessUrl);
  if (address === undefined) {
    logger.warn({ harnessUrl }, 'SW_HARNESS_GONE_AFTER_MS is set but the worker URL is not a URL: the harness is not watched');
    return;
  }
  const { host, port } = address;
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
      logger.debug({ harness: `${host}:${port}`, windowMs }, 'harness unreachable');
      onGone(`the harness that launched this worker (${host}:${port}) has been unreachable for ${windowMs} ms`);
    });
  });
}
