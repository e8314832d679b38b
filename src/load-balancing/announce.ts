/**
 * @module load-balancing/announce
 * A load-balancing worker started with SERVERLESS_WORKER_HARNESS_URL registers with
 * that running `serverless-worker harness` (`POST /v2/{endpoint}/load-balancing/workers`
 * with its app and health URLs) as it starts, before init, so that the harness's
 * /health shows it initializing; it unregisters as it drains. The platform needs none
 * of this: it knows its workers.
 *
 * Registration is kept, not sent once: until the harness accepts it, the worker tries
 * again with a growing pause (`retryMinMs` doubling up to `retryMaxMs`, jittered); once
 * accepted it repeats the same registration every `refreshMs`. The harness takes a
 * repeat of a registration it holds as a refresh (state and counters kept) and one it
 * does not hold (it restarted, or forgot the worker after a long unhealthy spell) as a
 * new worker: so a harness started after the worker, or restarted, has it back within
 * `refreshMs`. Withdrawing stops the loop, lets a registration in flight finish, and
 * only then sends the DELETE, so no entry is left behind by a late POST.
 */
import type { Logger } from 'pino';
import * as z from 'zod';
import { urlForLog } from '../log/index.js';
import { backoffDelay, sleep, systemClock, type Clock } from '../clock/index.js';

export interface Announcement {
  readonly harnessUrl: string;
  readonly endpointId: string;
  readonly workerId: string;
  readonly url: string;
  readonly healthUrl: string;
  readonly concurrency: number;
  readonly apiKey: string | undefined;
}

export interface RegistrationSettings {
  /** First pause after a failed registration, ms. */
  readonly retryMinMs: number;
  /** Longest pause between failed registrations, ms. */
  readonly retryMaxMs: number;
  /** Pause between repeats of an accepted registration, ms. */
  readonly refreshMs: number;
  /** Bound of one POST or DELETE, ms. */
  readonly attemptTimeoutMs: number;
}

export const DEFAULT_REGISTRATION: RegistrationSettings = Object.freeze({ retryMinMs: 250, retryMaxMs: 5_000, refreshMs: 5_000, attemptTimeoutMs: 5_000 });

/** The harness's answer to a registration (other fields ignored). */
const RegisteredSchema = z.object({ workerId: z.string(), created: z.boolean().optional() });

function base(announcement: Announcement): string {
  return `${announcement.harnessUrl.replace(/\/+$/, '')}/v2/${encodeURIComponent(announcement.endpointId)}/load-balancing/workers`;
}

function headers(announcement: Announcement): Record<string, string> {
  return { 'content-type': 'application/json', ...(announcement.apiKey !== undefined ? { authorization: `Bearer ${announcement.apiKey}` } : {}) };
}

type Attempt = { readonly ok: true; readonly created: boolean } | { readonly ok: false; readonly problem: string };

/** The registration of one worker with one harness, kept until `withdraw()`. */
export class HarnessRegistration {
  readonly #announcement: Announcement;
  readonly #logger: Logger;
  readonly #settings: RegistrationSettings;
  readonly #clock: Clock;
  readonly #stop = new AbortController();
  #loop: Promise<void> | undefined;
  /** A POST was sent (the harness may hold the worker even if its answer was lost). */
  #posted = false;
  /** The harness accepted a registration at least once. */
  #accepted = false;
  #registered = false;

  constructor(announcement: Announcement, logger: Logger, settings: RegistrationSettings = DEFAULT_REGISTRATION, clock: Clock = systemClock) {
    this.#announcement = announcement;
    this.#logger = logger;
    this.#settings = settings;
    this.#clock = clock;
  }

  /** Whether the harness accepted the last registration sent. */
  get registered(): boolean {
    return this.#registered;
  }

  /** Start registering; resolves once the first attempt ended (accepted or not); the loop goes on. */
  start(): Promise<void> {
    let firstDone!: () => void;
    const first = new Promise<void>((resolve) => (firstDone = resolve));
    this.#loop ??= this.#run(firstDone);
    return first;
  }

  /** Stop registering (a POST in flight finishes first), then unregister, best effort. */
  async withdraw(): Promise<void> {
    this.#stop.abort();
    await this.#loop;
    if (!this.#posted) return;
    this.#registered = false;
    try {
      await fetch(`${base(this.#announcement)}/${encodeURIComponent(this.#announcement.workerId)}`, {
        method: 'DELETE',
        headers: headers(this.#announcement),
        signal: AbortSignal.timeout(this.#settings.attemptTimeoutMs),
      });
    } catch (error) {
      // Never accepted: most likely there is no harness at all; nothing to warn about.
      this.#logger[this.#accepted ? 'warn' : 'debug'](
        { harness: urlForLog(this.#announcement.harnessUrl), err: error },
        'could not unregister from the harness',
      );
    }
  }

  async #run(firstDone: () => void): Promise<void> {
    const { harnessUrl, endpointId, workerId } = this.#announcement;
    const harness = urlForLog(harnessUrl);
    let failures = 0;
    let lastProblem: string | undefined;
    while (!this.#stop.signal.aborted) {
      const wasRegistered = this.#registered;
      const acceptedBefore = this.#accepted;
      const attempt = await this.#post();
      firstDone();
      this.#registered = attempt.ok;
      if (attempt.ok) {
        this.#accepted = true;
        const fields = { harness, endpointId, workerId, attempts: failures + 1 };
        if (!acceptedBefore) this.#logger.info(fields, 'registered with the harness as a load-balancing worker');
        else if (attempt.created) this.#logger.info(fields, 're-registered with the harness (it no longer held this worker: restarted, or forgot it)');
        else if (!wasRegistered) this.#logger.info(fields, 'the harness answers again and still holds this worker');
        failures = 0;
        lastProblem = undefined;
        await sleep(this.#settings.refreshMs, this.#stop.signal, this.#clock);
        continue;
      }
      failures++;
      // One line per kind of trouble, not one per attempt.
      if (attempt.problem !== lastProblem) {
        this.#logger.warn(
          { harness, endpointId, workerId, problem: attempt.problem },
          `could not register with the harness (${attempt.problem}); trying again with backoff`,
        );
      }
      lastProblem = attempt.problem;
      await sleep(backoffDelay(failures, { minMs: this.#settings.retryMinMs, maxMs: this.#settings.retryMaxMs }), this.#stop.signal, this.#clock);
    }
  }

  /** One POST; never rejects. */
  async #post(): Promise<Attempt> {
    const { url, healthUrl, workerId, concurrency } = this.#announcement;
    this.#posted = true;
    try {
      const response = await fetch(base(this.#announcement), {
        method: 'POST',
        headers: headers(this.#announcement),
        body: JSON.stringify({ url, healthUrl, workerId, concurrency }),
        signal: AbortSignal.timeout(this.#settings.attemptTimeoutMs),
      });
      const text = await response.text();
      if (!response.ok) return { ok: false, problem: `HTTP ${response.status}: ${text.slice(0, 300)}` };
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        body = undefined;
      }
      const parsed = RegisteredSchema.safeParse(body);
      if (!parsed.success) return { ok: false, problem: `HTTP ${response.status} with a body that is not {workerId}: ${text.slice(0, 200)}` };
      return { ok: true, created: parsed.data.created ?? response.status === 201 };
    } catch (error) {
      const cause = (error as { cause?: { code?: unknown } }).cause;
      const code = typeof cause?.code === 'string' ? `${cause.code} ` : '';
      return { ok: false, problem: `${code}${error instanceof Error ? error.message : String(error)}`.trim() };
    }
  }
}
