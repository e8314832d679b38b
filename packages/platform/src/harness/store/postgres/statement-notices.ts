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
 * Wake-ups coalesced (issue 47, item 5 again): PostgreSQL signals every LISTENing connection of
 * the database at each commit that notifies, and each reads the notification queue in a
 * transaction of its own (both harnesses' LISTEN connections, the sender's own included): with a
 * second harness listening, a drain's transactions were 2.6-2.7x alone even with one statement a
 * change. So at most one hot statement notifies a window (`noticeWindowMs`, peers.ts's PeerTimes;
 * default NOTICE_WINDOW_MS): the first one sent after the window has passed. The others commit
 * silent, and their events, once committed, are held here; the next statement that notifies
 * carries them (sent before its own, in the same commit), or, when none is sent within another
 * window, one of the outbox's statements does (notification-outbox.ts). An event reaches the
 * other harnesses at most two windows after its commit (never before it), and at once while a
 * harness changes less than once a window. A carrying statement that fails puts them back.
 *
 * The race a late joiner runs (peers.ts): a statement decides whether to notify when it
 * is sent, before its commit. A statement sent silent while a peer's hello was on its way
 * may commit after this store answered 'here' (and the joiner read again): so the control
 * messages wait for the silent statements sent before them to end (`settled`), and every
 * change the joiner was not told of committed before its 'here'.
 */
import { type Clock, type StoreEvent, systemClock, type TimerHandle } from 'serverless-worker/internal';
import { CHANNEL, encodePayloads } from './notifications.js';

/**
 * At most one hot statement notifies other harnesses in this window, ms (the others' events ride on a later
 * one): 100 ms bounds a busy harness's notifying commits to 10 a second whatever its rate (each wakes every
 * LISTENing connection), and an event's delay to 100 ms after its commit while statements follow (200 when none do).
 */
export const NOTICE_WINDOW_MS = 100;

/** One statement's notice: whether it notifies, the earlier statements' payloads it carries, and its end. */
export interface Notice {
  readonly notify: boolean;
  /** Payloads of events of statements committed earlier, sent by this one before its own (empty unless `notify`). */
  readonly carried: readonly string[];
  /** Whether `done` keeps the events it is given (a silent statement while another harness listens): when false, callers need not build them. */
  readonly holds: boolean;
  /**
   * The statement settled (call once, whatever its outcome): `committed`, its events when it committed (held for a
   * later statement when it did not notify); left out when it failed (what it carried is held again).
   */
  done(committed?: readonly StoreEvent[]): void;
}

/**
 * The SQL that sends `events` (a text expression per row of `source`: comma-joined event JSON objects) as
 * payloads under PostgreSQL's 8000-byte limit: the rows grouped by their running byte count (5 000 bytes a
 * group, and no row's events over 2 400: a payload stays under 7 900 bytes with the origin), one pg_notify a
 * group, after those of `carried` (a relation of the statement with a text column `payload`: the payloads it
 * carries for earlier statements, in order). Answers one row, `sent`, the count of payloads. `origin` (this
 * store's) leads each payload.
 */
export function notifySql(source: string, events: string, origin: string, carried: string): string {
  // The origin is this process's random UUID (notifications.ts): checked, it goes in the text as it is.
  if (!/^[0-9a-f-]{36}$/.test(origin)) throw new Error(`A store's origin must be a UUID, not ${JSON.stringify(origin)}`);
  return `SELECT count(pg_notify('${CHANNEL}', p.payload)) AS sent
    FROM (
      SELECT c.payload FROM ${carried} c
      UNION ALL
      SELECT '{"origin":"${origin}","events":[' || g.events || ']}' FROM (
        SELECT string_agg(e.events, ',' ORDER BY e.o) AS events
        FROM (SELECT x.events, x.o, sum(octet_length(x.events)) OVER (ORDER BY x.o) / 5000 AS part
          FROM (SELECT ${events} AS events, row_number() OVER () AS o FROM ${source}) x
          WHERE x.events IS NOT NULL) e
        GROUP BY e.part
      ) g
    ) p`;
}

/** The JSON texts of `events`, comma-joined (a row's events in notifySql). */
export function eventsText(events: readonly StoreEvent[]): string {
  return events.map((event) => JSON.stringify(event)).join(',');
}

/** How the notices go out: the window, the outbox's send for events no statement carried in time, the clock. */
export interface NoticeTiming {
  readonly windowMs: number;
  /** Send committed events in a statement of their own (notification-outbox.ts). */
  readonly flush: (events: readonly StoreEvent[]) => void;
  readonly clock?: Clock;
}

export class StatementNotices {
  readonly origin: string;
  readonly #anyone: () => boolean;
  readonly #timing: NoticeTiming;
  readonly #clock: Clock;
  /** The silent statements in flight. */
  readonly #silent = new Set<Promise<void>>();
  /** The control messages' order: each waits for the one before it. */
  #controls: Promise<void> = Promise.resolve();
  /** Committed events not sent yet, in order: the next notifying statement carries them. */
  #held: StoreEvent[] = [];
  /** When a statement (or the outbox) last notified for this store (the clock's ms). */
  #notifiedAt = Number.NEGATIVE_INFINITY;
  /** Sends the held events through the outbox when no statement carried them within a window. */
  #flushTimer: TimerHandle | undefined;

  /** `anyone`: whether another harness listens now (peers.ts). */
  constructor(origin: string, anyone: () => boolean, timing: NoticeTiming) {
    this.origin = origin;
    this.#anyone = anyone;
    this.#timing = timing;
    this.#clock = timing.clock ?? systemClock;
  }

  /** A statement about to be sent: it notifies when another harness listens and no statement notified within the window. */
  begin(): Notice {
    const anyone = this.#anyone();
    if (anyone && this.#clock.now() - this.#notifiedAt >= this.#timing.windowMs) return this.#notifying();
    let done: () => void = () => undefined;
    const ended = new Promise<void>((resolve) => (done = resolve));
    this.#silent.add(ended);
    return {
      notify: false,
      carried: [],
      holds: anyone,
      done: (committed) => {
        this.#silent.delete(ended);
        done();
        // Held only while someone listens (a late joiner is told to read again instead: peers.ts).
        if (anyone && committed && committed.length > 0) this.#hold(committed);
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

  /** Hand the held events to the outbox now (the store closes). */
  flushHeld(): void {
    this.#flushTimer?.cancel();
    this.#flushTimer = undefined;
    const events = this.#held.splice(0);
    if (events.length > 0 && this.#anyone()) this.#timing.flush(events);
  }

  #notifying(): Notice {
    this.#notifiedAt = this.#clock.now();
    const events = this.#held.splice(0);
    this.#flushTimer?.cancel();
    this.#flushTimer = undefined;
    return {
      notify: true,
      carried: events.length > 0 ? encodePayloads(this.origin, events) : [],
      holds: false,
      done: (committed) => {
        // Not sent (the statement failed): held again, ahead of those held since.
        if (!committed && events.length > 0) this.#hold(events, true);
      },
    };
  }

  #hold(events: readonly StoreEvent[], first = false): void {
    if (first) this.#held.unshift(...events);
    else this.#held.push(...events);
    // A statement notifying after the window carries them; none within another window: the outbox sends them.
    this.#flushTimer ??= this.#clock.setTimer(this.#notifiedAt + 2 * this.#timing.windowMs - this.#clock.now(), () => {
      this.#flushTimer = undefined;
      this.#notifiedAt = this.#clock.now();
      this.flushHeld();
    });
  }
}
