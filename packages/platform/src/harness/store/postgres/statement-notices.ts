/**
 * @module harness/store/postgres/statement-notices
 * The hot statements' own notifications (issue 47, item 5): the submission, the claim and
 * the result statement notify other harnesses in their own statement (`pg_notify` in a
 * CTE, so the notification commits with the change, never without it, never before it is
 * visible), at most one statement's worth of payloads, and only while another harness
 * listens (peers.ts). Through the outbox (notification-outbox.ts) each change cost a second
 * transaction with two harnesses: 1.8-2.8 transactions a job instead of 0.9-1.0.
 *
 * What this costs: PostgreSQL serializes the commits of transactions that notify (the
 * notification queue's lock is held from `PreCommit_Notify` to the end of the commit,
 * its WAL flush included), so with two harnesses the hot statements' commits no longer
 * share a flush; alone, a harness's statements do not notify and commit as before. The
 * rarer changes (cancel, progress, the due sweep, retries) still go through the outbox.
 *
 * The race a late joiner runs (peers.ts): a statement decides whether to notify when it
 * is sent, before its commit. A statement sent silent while a peer's hello was on its way
 * may commit after this store answered 'here' (and the joiner read again): so the control
 * messages wait for the silent statements sent before them to end (`settled`), and every
 * change the joiner was not told of committed before its 'here'.
 */
import type { StoreEvent } from 'serverless-worker/internal';
import { CHANNEL, encodePayloads } from './notifications.js';

/** One statement's notice: whether it notifies, and its end (call `done` once it settled, whatever its outcome). */
export interface Notice {
  readonly notify: boolean;
  done(): void;
}

/**
 * The SQL that sends `events` (a text expression per row of `source`: comma-joined event JSON objects) as
 * payloads under PostgreSQL's 8000-byte limit: the rows grouped by their running byte count (5 000 bytes a
 * group, and no row's events over 2 400: a payload stays under 7 900 bytes with the origin), one pg_notify a
 * group. Answers one row, `sent`, the count of payloads. `origin` (this store's) leads each payload.
 */
export function notifySql(source: string, events: string, origin: string): string {
  // The origin is this process's random UUID (notifications.ts): checked, it goes in the text as it is.
  if (!/^[0-9a-f-]{36}$/.test(origin)) throw new Error(`A store's origin must be a UUID, not ${JSON.stringify(origin)}`);
  return `SELECT count(pg_notify('${CHANNEL}', '{"origin":"${origin}","events":[' || g.events || ']}')) AS sent
    FROM (
      SELECT string_agg(e.events, ',' ORDER BY e.o) AS events
      FROM (SELECT x.events, x.o, sum(octet_length(x.events)) OVER (ORDER BY x.o) / 5000 AS part
        FROM (SELECT ${events} AS events, row_number() OVER () AS o FROM ${source}) x
        WHERE x.events IS NOT NULL) e
      GROUP BY e.part
    ) g`;
}

/** The JSON texts of `events`, comma-joined (a row's events in notifySql). */
export function eventsText(events: readonly StoreEvent[]): string {
  return events.map((event) => JSON.stringify(event)).join(',');
}

export class StatementNotices {
  readonly origin: string;
  readonly #anyone: () => boolean;
  /** The silent statements in flight. */
  readonly #silent = new Set<Promise<void>>();
  /** The control messages' order: each waits for the one before it. */
  #controls: Promise<void> = Promise.resolve();

  /** `anyone`: whether another harness listens now (peers.ts). */
  constructor(origin: string, anyone: () => boolean) {
    this.origin = origin;
    this.#anyone = anyone;
  }

  /** A statement about to be sent: it notifies when another harness listens. */
  begin(): Notice {
    if (this.#anyone()) return { notify: true, done: () => undefined };
    let done: () => void = () => undefined;
    const ended = new Promise<void>((resolve) => (done = resolve));
    this.#silent.add(ended);
    return {
      notify: false,
      done: () => {
        this.#silent.delete(ended);
        done();
      },
    };
  }

  /** Payloads for `events` of a statement that notifies (its events known before it runs: the submission's). */
  payloads(events: readonly StoreEvent[]): string[] {
    return encodePayloads(this.origin, events);
  }

  /** Resolves once every control message so far was handed to `send`. */
  controlsQueued(): Promise<void> {
    return this.#controls;
  }

  /** Run `send` once the silent statements sent before now have ended, after the control messages before it. */
  afterSilent(send: () => void): void {
    const silent = [...this.#silent];
    this.#controls = this.#controls.then(() => Promise.all(silent)).then(send, send);
  }
}
