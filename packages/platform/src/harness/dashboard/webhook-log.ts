/**
 * @module harness/dashboard/webhook-log
 * The dashboard's record of webhook deliveries: how each delivery of a job ended
 * (delivered or given up, attempts, last status or error), for the job page. Bounded:
 * the oldest job's record goes once `maxJobs` jobs have one. URLs are stored as logs
 * show them (no query, fragment or credentials).
 */
import { systemClock } from 'serverless-worker/internal';
import { urlForLog, type WebhookOutcome } from '../webhooks/webhook-sender.js';

/** One delivery as the job page shows it. */
export interface WebhookDeliveryRecord {
  readonly url: string;
  readonly delivered: boolean;
  readonly attempts: number;
  readonly last: number | string;
  /** Epoch ms the delivery ended. */
  readonly at: number;
}

export class WebhookLog {
  readonly #byJob = new Map<string, WebhookDeliveryRecord[]>();
  readonly #maxJobs: number;
  readonly #now: () => number;
  readonly #listeners = new Set<(jobId: string) => void>();

  /** Keep the deliveries of at most `maxJobs` jobs (default 10 000). */
  constructor(maxJobs = 10_000, now: () => number = () => systemClock.now()) {
    this.#maxJobs = maxJobs;
    this.#now = now;
  }

  record(outcome: WebhookOutcome): void {
    const entry: WebhookDeliveryRecord = {
      url: urlForLog(outcome.url),
      delivered: outcome.delivered,
      attempts: outcome.attempts,
      last: outcome.last,
      at: this.#now(),
    };
    const list = this.#byJob.get(outcome.jobId);
    if (list) {
      list.push(entry);
    } else {
      this.#byJob.set(outcome.jobId, [entry]);
      if (this.#byJob.size > this.#maxJobs) {
        const oldest = this.#byJob.keys().next().value;
        if (oldest !== undefined) this.#byJob.delete(oldest);
      }
    }
    for (const listener of this.#listeners) listener(outcome.jobId);
  }

  /** Call `listener` with the job id after each delivery recorded (the live hub, while a page is open); answers the unsubscribe. */
  onRecord(listener: (jobId: string) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** The deliveries recorded for `jobId`, oldest first. */
  forJob(jobId: string): readonly WebhookDeliveryRecord[] {
    return this.#byJob.get(jobId) ?? [];
  }
}
