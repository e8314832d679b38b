/**
 * @module harness/launcher/scale-events
 * The launcher's scale events, kept per endpoint in a ring of the last `limit`: a
 * worker started (scale up), reached the harness (ready, with its cold start), was told
 * to stop (scale down, with why), exited, crashed (with the backoff before the next
 * start), the endpoint turned unhealthy or healthy again, workers were throttled for
 * lack of GPUs. Each event carries the endpoint's worker processes after it, so that a
 * reader can draw the launched workers over time. The dashboard reads them.
 */

export const SCALE_EVENT_KINDS = ['scale-up', 'ready', 'scale-down', 'exit', 'crash', 'unhealthy', 'healthy', 'throttled'] as const;
export type ScaleEventKind = (typeof SCALE_EVENT_KINDS)[number];

export interface ScaleEvent {
  /** Order of recording across the launcher, from 1. */
  readonly seq: number;
  /** Epoch ms. */
  readonly at: number;
  readonly endpointId: string;
  readonly kind: ScaleEventKind;
  /** The worker it concerns; absent for endpoint-wide events (unhealthy, healthy, throttled). */
  readonly workerId?: string;
  /** One line saying what happened, as the harness log says it. */
  readonly message: string;
  /** The endpoint's worker processes after the event (those stopping included). */
  readonly workers: number;
  /** Jobs that went back to the queue with an exiting worker. */
  readonly requeued?: readonly string[];
  /** After a crash: the wait before the next start (the backoff), ms. */
  readonly nextStartInMs?: number;
}

export type ScaleEventInput = Omit<ScaleEvent, 'seq'>;

export class ScaleEvents {
  readonly #limit: number;
  readonly #byEndpoint = new Map<string, ScaleEvent[]>();
  #seq = 0;

  /** Keep the last `limit` events per endpoint (default 500). */
  constructor(limit = 500) {
    this.#limit = limit;
  }

  /** Events recorded so far (a revision number for readers). */
  get seq(): number {
    return this.#seq;
  }

  add(event: ScaleEventInput): ScaleEvent {
    const recorded: ScaleEvent = { seq: ++this.#seq, ...event };
    let list = this.#byEndpoint.get(event.endpointId);
    if (!list) {
      list = [];
      this.#byEndpoint.set(event.endpointId, list);
    }
    list.push(recorded);
    if (list.length > this.#limit) list.splice(0, list.length - this.#limit);
    return recorded;
  }

  /** The last `max` events of one endpoint, or of all (merged by time), oldest first. */
  read(endpointId?: string, max = this.#limit): ScaleEvent[] {
    const events =
      endpointId !== undefined ? [...(this.#byEndpoint.get(endpointId) ?? [])] : [...this.#byEndpoint.values()].flat().sort((a, b) => a.seq - b.seq);
    return events.slice(Math.max(0, events.length - max));
  }
}
