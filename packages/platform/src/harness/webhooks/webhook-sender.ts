/**
 * @module harness/webhooks/webhook-sender
 * Delivers job webhooks (spec 6): POST the payload as JSON; an answer of 200 means
 * delivered; anything else (another status, a network error, a timeout) is retried,
 * up to 2 more times, `retryDelayMs` apart (10 s by default, as on the platform).
 * Deliveries run on their own: `deliver` returns at once, so a slow or dead receiver
 * never holds up the queue. A give-up is logged and counted.
 *
 * With a target policy (net/target-policy.ts), a URL whose host is refused, or whose
 * connection lands on a refused address (checked on the socket once connected, before
 * any byte of the request: a name that resolves elsewhere at connect time is caught
 * too), is not retried: the delivery ends failed with the reason, logged and counted
 * like a give-up, and shown as such (`refused`).
 */
import type { Logger } from 'pino';
import {
  type Clock,
  defaultPort,
  type Metrics,
  systemClock,
  type TargetPolicy,
  targetRefusal,
  TargetRefusedError,
  type TimerHandle,
  urlForLog,
} from 'serverless-worker/internal';

/** A webhook URL as logs show it (the one helper of log/url-for-log.ts). */
export { urlForLog };

export interface WebhookSettings {
  /** Wait between attempts, ms; default 10 000 (spec 6). Tests scale it down. */
  readonly retryDelayMs: number;
  /** Attempts in all, the first included; default 3 (1 + 2 retries, spec 6). */
  readonly attempts: number;
  /** How long one attempt may take (connect, answer, body), ms; default 10 000. */
  readonly timeoutMs: number;
}

export const DEFAULT_WEBHOOK_SETTINGS: WebhookSettings = Object.freeze({ retryDelayMs: 10_000, attempts: 3, timeoutMs: 10_000 });

/** What a delivery is about, for logs. */
export interface WebhookContext {
  readonly jobId: string;
  readonly endpointId: string;
}

/** How one delivery ended. */
export interface WebhookOutcome {
  readonly url: string;
  readonly jobId: string;
  readonly delivered: boolean;
  readonly attempts: number;
  /** The last attempt's status code, or its error message. */
  readonly last: number | string;
  /** Why the target policy refused the URL (nothing was sent); absent otherwise. */
  readonly refused?: string;
}

export interface WebhookSenderOptions {
  readonly settings?: Partial<WebhookSettings>;
  readonly logger?: Logger;
  readonly metrics?: Metrics;
  /** Timer source for the delay between attempts; default the system clock. */
  readonly clock?: Clock;
  /** Told when each delivery ends (tests, diagnostics). */
  readonly onOutcome?: (outcome: WebhookOutcome) => void;
  /** Where deliveries may go; default anywhere (the server always gives one). */
  readonly policy?: TargetPolicy;
}

export class WebhookSender {
  readonly settings: WebhookSettings;
  readonly #logger: Logger | undefined;
  readonly #metrics: Metrics | undefined;
  readonly #clock: Clock;
  readonly #onOutcome: ((outcome: WebhookOutcome) => void) | undefined;
  readonly #policy: TargetPolicy | undefined;
  /** The undici dispatcher that checks each new connection against the policy (made on the first delivery). */
  #dispatcher: Promise<import('undici').Dispatcher> | undefined;
  readonly #abort = new AbortController();
  readonly #timers = new Set<TimerHandle>();
  readonly #idleWaiters = new Set<() => void>();
  #pending = 0;

  constructor(options: WebhookSenderOptions = {}) {
    this.settings = Object.freeze({ ...DEFAULT_WEBHOOK_SETTINGS, ...options.settings });
    this.#logger = options.logger;
    this.#metrics = options.metrics;
    this.#clock = options.clock ?? systemClock;
    this.#onOutcome = options.onOutcome;
    this.#policy = options.policy;
  }

  /** Start delivering `payload` to `url`; returns at once. */
  deliver(url: string, payload: unknown, context: WebhookContext): void {
    if (this.#abort.signal.aborted) {
      this.#logger?.warn({ url: urlForLog(url), requestId: context.jobId }, 'webhook not sent: the harness is closing');
      return;
    }
    this.#pending++;
    const body = JSON.stringify(payload);
    void this.#run(url, body, context).finally(() => {
      this.#pending--;
      if (this.#pending === 0) for (const wake of [...this.#idleWaiters]) wake();
    });
  }

  /** Deliveries not yet ended. */
  get pending(): number {
    return this.#pending;
  }

  /** Resolves once no delivery is under way. */
  whenIdle(): Promise<void> {
    if (this.#pending === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const wake = (): void => {
        this.#idleWaiters.delete(wake);
        resolve();
      };
      this.#idleWaiters.add(wake);
    });
  }

  /** Abandon every delivery under way (each is logged as given up) and refuse new ones. */
  close(): void {
    this.#abort.abort(new Error('harness closing'));
    for (const timer of this.#timers) timer.cancel();
    this.#timers.clear();
    for (const wake of [...this.#idleWaiters]) wake();
    void this.#dispatcher?.then((dispatcher) => dispatcher.close()).catch(() => undefined);
  }

  async #run(url: string, body: string, context: WebhookContext): Promise<void> {
    const { attempts } = this.settings;
    let last: number | string | { refused: string } = 'not attempted';
    let attempt = 0;
    while (attempt < attempts && !this.#abort.signal.aborted) {
      if (attempt > 0) {
        const waited = await this.#delay(this.settings.retryDelayMs);
        if (!waited) break;
      }
      attempt++;
      last = await this.#attempt(url, body);
      if (typeof last === 'object') {
        // Refused by the policy: nothing was sent, and sending again would be refused too.
        this.#metrics?.webhookDeliveriesTotal.inc({ outcome: 'failure' });
        this.#metrics?.webhookGiveUpsTotal.inc();
        this.#logger?.warn(
          { url: urlForLog(url), requestId: context.jobId, endpointId: context.endpointId, reason: last.refused },
          'webhook refused by the target policy (see --webhook-allow); not sent',
        );
        this.#onOutcome?.({ url, jobId: context.jobId, delivered: false, attempts: attempt, last: `refused: ${last.refused}`, refused: last.refused });
        return;
      }
      const delivered = last === 200;
      this.#metrics?.webhookDeliveriesTotal.inc({ outcome: delivered ? 'success' : 'failure' });
      if (delivered) {
        this.#logger?.debug({ url: urlForLog(url), requestId: context.jobId, attempt }, 'webhook delivered');
        this.#onOutcome?.({ url, jobId: context.jobId, delivered: true, attempts: attempt, last });
        return;
      }
      this.#logger?.info({ url: urlForLog(url), requestId: context.jobId, attempt, of: attempts, answer: last }, 'webhook attempt failed');
    }
    this.#metrics?.webhookGiveUpsTotal.inc();
    this.#logger?.warn(
      { url: urlForLog(url), requestId: context.jobId, endpointId: context.endpointId, attempts: attempt, answer: last },
      this.#abort.signal.aborted ? 'webhook given up: the harness is closing' : 'webhook given up after its last attempt',
    );
    this.#onOutcome?.({ url, jobId: context.jobId, delivered: false, attempts: attempt, last });
  }

  /** One POST; answers the status code, the error's message, or the policy's refusal. */
  async #attempt(url: string, body: string): Promise<number | string | { refused: string }> {
    const timeout = AbortSignal.timeout(this.settings.timeoutMs);
    const signal = AbortSignal.any([timeout, this.#abort.signal]);
    try {
      if (this.#policy) {
        const target = new URL(url);
        const refused = this.#policy.refuseName(target.hostname, defaultPort(target));
        if (refused !== undefined) return { refused };
      }
      // Loaded on the first delivery, as the management client does: a harness whose jobs carry no
      // webhook never loads undici (about 20 MB of RSS, the slowest import of its dependencies).
      const { request } = await import('undici');
      const dispatcher = this.#policy ? await this.#guardedDispatcher(this.#policy) : undefined;
      const response = await request(url, {
        ...(dispatcher ? { dispatcher } : {}),
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json', 'user-agent': 'serverless-worker-harness' },
        signal,
        headersTimeout: this.settings.timeoutMs,
        bodyTimeout: this.settings.timeoutMs,
      });
      await response.body.dump().catch(() => undefined);
      return response.statusCode;
    } catch (error) {
      const refusal = targetRefusal(error);
      if (refusal) return { refused: refusal.reason };
      return (error as Error).message || String(error);
    }
  }

  /** An undici Agent whose every new connection is checked against `policy` on the address it reached, before the request is written. */
  #guardedDispatcher(policy: TargetPolicy): Promise<import('undici').Dispatcher> {
    this.#dispatcher ??= import('undici').then(({ Agent, buildConnector }) => {
      const connect = buildConnector({});
      return new Agent({
        connect: (options, callback) => {
          connect(options, (error, socket) => {
            if (error !== null) {
              callback(error, null);
              return;
            }
            const refused = policy.refuseAddress(socket.remoteAddress ?? '', socket.remotePort ?? 0);
            if (refused === undefined) {
              callback(null, socket);
              return;
            }
            socket.destroy();
            callback(new TargetRefusedError(refused), null);
          });
        },
      });
    });
    return this.#dispatcher;
  }

  /** Wait `ms` unless closing; answers false when closing cut it short. */
  #delay(ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      if (this.#abort.signal.aborted) {
        resolve(false);
        return;
      }
      const onAbort = (): void => {
        this.#timers.delete(timer);
        resolve(false);
      };
      const timer = this.#clock.setTimer(ms, () => {
        this.#timers.delete(timer);
        this.#abort.signal.removeEventListener('abort', onAbort);
        resolve(true);
      });
      this.#timers.add(timer);
      this.#abort.signal.addEventListener('abort', onAbort, { once: true });
    });
  }
}
