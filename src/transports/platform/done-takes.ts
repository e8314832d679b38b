/**
 * @module transports/platform/done-takes
 * A worker's next take on its result post (issue 47 item 6), where the platform's job-take
 * answer advertised it (`x-sw-take-on-done: 1`, job/take-on-done.ts: our harness).
 *
 * The runtime frees a job's slot when its handler settles, just before the result is
 * posted, and asks for the next jobs after that turn of the event loop: a result post and
 * a job-take, two requests a job, one right after the other. Once the take-on-done was
 * advertised, a result post waits for the end of the turn it was made in (one
 * setImmediate); a take made meanwhile rides on it: its first attempt goes to
 * `<done>&take=N&job_in_progress=0|1`, and the jobs of its answer (`{"jobs": [...]}` beside
 * the acknowledgement) are the take's. A take that found no waiting post, or whose post's
 * first attempt did not land (no answer, or not 2xx), or that got no jobs, is a job-take
 * as before. Retries of the post go without the take (deliver.ts's `firstUrl`): a job is
 * never handed out twice to one post. Jobs of an answer that was lost are this worker's
 * on the harness but never reach it: it never lists them in its heartbeat, so they go back
 * to the queue as a lost job-take answer's do (the harness's reconcile).
 *
 * Without the advertisement (the real platform) a result post goes at once, byte for byte
 * as before, and every take is a job-take.
 */
import type { Job } from '../../job/index.js';
import { TAKE_ON_DONE_VALUE } from '../../job/take-on-done.js';
import type { ResultReceipt } from '../transport.js';
import { readResultReceipt, receiptOf } from '../result-limits.js';
import type { FirstAttempt } from './deliver.js';
import type { HttpAnswer } from './http-client.js';
import { readJobs } from './take-answer.js';

/** The setImmediate found when this module was loaded: a test's fake timers must not hold result posts back. */
const realSetImmediate = globalThis.setImmediate;

/** How a take rides on a result post: its first attempt's URL, and who hears that attempt's outcome. */
export interface JoinedFirst {
  readonly firstUrl: string;
  readonly onFirst: (first: FirstAttempt) => void;
}

/** The jobs a result post's answer handed out. */
export interface JoinedTake {
  /** The answer (its headers say how the jobs' chunks may be posted). */
  readonly answer: HttpAnswer;
  readonly jobs: Job[];
  /** Items that were not jobs (no id or input), skipped. */
  readonly invalid: number;
}

/** A result post waiting for the end of the turn it was made in. */
interface Waiting {
  readonly url: string;
  start(join: JoinedFirst | undefined): Promise<unknown>;
}

export class DoneTakes {
  /** The last job-take answer that handed out jobs advertised the take on job-done. */
  #advertised = false;
  readonly #waiting: Waiting[] = [];
  #flush: ReturnType<typeof setImmediate> | undefined;
  /** Bodies of answers that carried jobs, parsed once (the receipt is read from the same body). */
  readonly #parsed = new WeakMap<HttpAnswer, unknown>();

  /** A job-take answer that handed out jobs (or a result answer that did): whether it advertised. */
  heard(answer: HttpAnswer): void {
    this.#advertised = answer.takeOnDone === TAKE_ON_DONE_VALUE;
  }

  /**
   * Post a result: `send` posts it (with `join` when a take rides on its first attempt).
   * Advertised and not `now`: at the end of this turn, unless a take comes first.
   */
  post<T>(url: string, now: boolean, send: (join: JoinedFirst | undefined) => Promise<T>): Promise<T> {
    if (!this.#advertised || now) return send(undefined);
    return new Promise<T>((resolve, reject) => {
      this.#waiting.push({
        url,
        start: (join) => {
          const sent = send(join);
          sent.then(resolve, reject);
          return sent;
        },
      });
      if (this.#flush === undefined) this.#flush = realSetImmediate(() => this.#sendWaiting());
    });
  }

  /** A take now: on the latest result post waiting, when one is; answers the jobs its answer handed out, or undefined (take as usual). */
  async take(max: number, inProgress: boolean): Promise<JoinedTake | undefined> {
    const waiting = this.#waiting.pop();
    if (waiting === undefined) return undefined;
    const first = await new Promise<FirstAttempt>((resolve) => {
      const firstUrl = `${waiting.url}&take=${Math.floor(max)}&job_in_progress=${inProgress ? '1' : '0'}`;
      // A post that failed before its first attempt's outcome was told (never, as deliver is written): the take goes on as usual.
      const onFirst = (outcome: FirstAttempt): void => {
        // Parsed here, before the result's own reader asks (receiptOf): once for both.
        if ('answer' in outcome && outcome.answer.status >= 200 && outcome.answer.status < 300) this.#body(outcome.answer);
        resolve(outcome);
      };
      waiting.start({ firstUrl, onFirst }).catch((error: unknown) => resolve({ error }));
    });
    if (!('answer' in first)) return undefined;
    const { answer } = first;
    if (answer.status < 200 || answer.status >= 300) return undefined;
    const body = this.#body(answer);
    const items = typeof body === 'object' && body !== null ? (body as { jobs?: unknown }).jobs : undefined;
    if (!Array.isArray(items)) return undefined;
    return { answer, ...readJobs(items) };
  }

  /** What the platform made of a result, from its answer (parsed once when it also carried jobs). */
  receiptOf(answer: HttpAnswer): ResultReceipt {
    return this.#parsed.has(answer) ? receiptOf(this.#parsed.get(answer)) : readResultReceipt(answer.text);
  }

  /** Result posts no take came for: they go alone, as they are. */
  #sendWaiting(): void {
    this.#flush = undefined;
    for (const waiting of this.#waiting.splice(0)) void waiting.start(undefined).catch(() => undefined);
  }

  #body(answer: HttpAnswer): unknown {
    if (!this.#parsed.has(answer)) {
      let body: unknown;
      try {
        body = JSON.parse(answer.text);
      } catch {
        body = undefined;
      }
      this.#parsed.set(answer, body);
    }
    return this.#parsed.get(answer);
  }
}
