/**
 * @module worker/wait-for-url
 * `waitForUrl(url)`: wait until a local HTTP server answers, for workers that start
 * an inference server (vLLM, TGI, ComfyUI) in `init` and proxy jobs to it. GETs the URL
 * with a growing pause between attempts (backoff), each attempt bounded, until the
 * answer's status is accepted (default 2xx), the timeout passes, or the signal aborts.
 * The error names the URL (without credentials or query: urlForLog), the attempts and
 * the last error or status. Uses node:http
 * (and node:https) with no keep-alive: nothing stays open once it answers.
 */
import type { IncomingMessage } from 'node:http';
import { ServerlessWorkerError } from '../job/index.js';
import { urlForLog } from '../log/url-for-log.js';
import { sleep, systemClock, type Clock } from '../clock/index.js';
const { request: httpRequest } = process.getBuiltinModule('node:http');

export interface WaitForUrlOptions {
  /** Times the attempts, pauses and the bound; default the system clock. */
  readonly clock?: Clock;
  /** Give up after this long, ms; default 300 000 (5 minutes). */
  readonly timeoutMs?: number;
  /** Pause after the first failed attempt, ms; doubled after each (backoff); default 100. */
  readonly intervalMs?: number;
  /** Longest pause between attempts, ms; default 2 000. */
  readonly maxIntervalMs?: number;
  /** Bound of one attempt, ms; default 5 000. */
  readonly requestTimeoutMs?: number;
  /** Which status means ready; default any 2xx. */
  readonly accept?: (status: number) => boolean;
  /** Request headers (an Authorization header for the local server, say); default none. */
  readonly headers?: Readonly<Record<string, string>>;
  /** Stop waiting (pass init's ctx.signal): rejects with the signal's reason. Default none. */
  readonly signal?: AbortSignal;
}

/** How the wait ended. */
export interface WaitForUrlResult {
  readonly status: number;
  readonly attempts: number;
  readonly elapsedMs: number;
}

const DEFAULTS = { timeoutMs: 300_000, intervalMs: 100, maxIntervalMs: 2_000, requestTimeoutMs: 5_000 } as const;

/** One GET; answers the status (body drained) or throws the connection error. */
function getStatus(url: URL, headers: Readonly<Record<string, string>>, timeoutMs: number, signal: AbortSignal): Promise<number> {
  // node:https (its TLS stack) only for an https URL.
  const send = url.protocol === 'https:' ? process.getBuiltinModule('node:https').request : httpRequest;
  return new Promise((resolve, reject) => {
    const request = send(url, { method: 'GET', headers: { ...headers }, agent: false, signal, timeout: timeoutMs }, (response: IncomingMessage) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode ?? 0));
      response.on('error', reject);
    });
    request.on('timeout', () => request.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    request.on('error', reject);
    request.end();
  });
}

function describe(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const message = error instanceof Error ? error.message : String(error);
  return code !== undefined && !message.includes(code) ? `${code} ${message}` : message;
}

/**
 * Wait until `url` answers an accepted status (default 2xx).
 * @throws ServerlessWorkerError SW_URL_NOT_READY after `timeoutMs`, naming the attempts and the last error or status;
 *   the signal's reason when `signal` aborts; SW_INVALID_OPTIONS for a URL that is not http(s).
 */
export async function waitForUrl(url: string | URL, options: WaitForUrlOptions = {}): Promise<WaitForUrlResult> {
  const target = new URL(url);
  if (target.protocol !== 'http:' && target.protocol !== 'https:') {
    throw new ServerlessWorkerError('SW_INVALID_OPTIONS', `waitForUrl needs an http: or https: URL, got ${JSON.stringify(String(url))}`);
  }
  const timeoutMs = options.timeoutMs ?? DEFAULTS.timeoutMs;
  const maxIntervalMs = options.maxIntervalMs ?? DEFAULTS.maxIntervalMs;
  const requestTimeoutMs = options.requestTimeoutMs ?? DEFAULTS.requestTimeoutMs;
  const accept = options.accept ?? ((status: number) => status >= 200 && status < 300);
  const clock = options.clock ?? systemClock;
  const startedAt = clock.now();
  const deadline = startedAt + timeoutMs;
  const timeout = new AbortController();
  const timer = clock.setTimer(timeoutMs, () => timeout.abort(), { keepAlive: true });
  const signal = options.signal ? AbortSignal.any([options.signal, timeout.signal]) : timeout.signal;
  let pause = options.intervalMs ?? DEFAULTS.intervalMs;
  let attempts = 0;
  let last = 'no attempt finished';
  try {
    while (!signal.aborted) {
      attempts++;
      try {
        const left = Math.max(1, Math.min(requestTimeoutMs, deadline - clock.now()));
        const status = await getStatus(target, options.headers ?? {}, left, signal);
        if (accept(status)) return { status, attempts, elapsedMs: clock.now() - startedAt };
        last = `HTTP ${status}`;
      } catch (error) {
        if (signal.aborted) break;
        last = describe(error);
      }
      await sleep(Math.min(pause, Math.max(0, deadline - clock.now())), signal, clock);
      pause = Math.min(maxIntervalMs, pause * 2);
    }
  } finally {
    timer.cancel();
  }
  // Named without credentials, query or fragment: the message goes into logs and job errors.
  const named = urlForLog(target.href);
  if (options.signal?.aborted) {
    const reason: unknown = options.signal.reason;
    throw reason instanceof Error ? reason : new ServerlessWorkerError('SW_URL_NOT_READY', `waiting for ${named} was aborted`);
  }
  throw new ServerlessWorkerError('SW_URL_NOT_READY', `${named} did not answer ready within ${timeoutMs} ms (${attempts} attempts); last: ${last}`, {
    url: named,
    timeoutMs,
    attempts,
    last,
  });
}
