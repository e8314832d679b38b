/**
 * @module harness/store/postgres/store-listening
 * The store's LISTEN connection and what rides on it: the other harnesses on the
 * database (peers.ts: events are sent to them only while one listens; the outbox that
 * sends them, notification-outbox.ts) and this process's clock against PostgreSQL's
 * (clock-skew.ts), measured when the store opens and each time the connection comes
 * back: beyond the bound, changing calls are refused until a later measure is within it.
 */
import type postgres from 'postgres';
import { systemClock, type TimerHandle, withinTime } from 'serverless-worker/internal';
import { measureClockSkew, skewRefusal } from './clock-skew.js';
import { NotificationOutbox } from './notification-outbox.js';
import type { StoreEventHub } from './notifications.js';
import { Peers, type PeerTimes } from './peers.js';
import { NOTICE_WINDOW_MS, StatementNotices } from './statement-notices.js';

/** While refused for skew: how often the clock is measured again, ms. */
const SKEW_RECHECK_MS = 10_000;

/** How long close() waits for the events still held to be sent, ms. */
const CLOSE_FLUSH_MS = 2_000;

/** The clock the harness passes as `now` (epoch ms), and the bound on its skew from PostgreSQL's, ms. */
export interface WatchedClock {
  readonly clock: { now(): number };
  readonly maxSkewMs: number;
}

/** Rejects with the skew refusal when `watched`'s clock is beyond its bound now. */
export async function checkClockAtOpen(sql: postgres.Sql, watched: WatchedClock): Promise<void> {
  const refused = skewRefusal(await measureClockSkew(sql, () => watched.clock.now()), watched.maxSkewMs);
  if (refused) throw refused;
}

export class StoreListening {
  readonly outbox: NotificationOutbox;
  /** The hot statements' own notifications (statement-notices.ts). */
  readonly notices: StatementNotices;
  readonly #peers: Peers;
  readonly #sql: postgres.Sql;
  readonly #hub: StoreEventHub;
  readonly #onError: (error: unknown) => void;
  /** Set while this process's clock is too far from the database's. */
  #refused: Error | undefined;
  #recheck: TimerHandle | undefined;
  #closed = false;

  /** `endpoints`: every endpoint's id, for the wake-up ('resync') a peer's 'here' or a reconnect asks for. */
  constructor(sql: postgres.Sql, hub: StoreEventHub, peerTimes: PeerTimes, onError: (error: unknown) => void, endpoints: () => Promise<string[]>) {
    this.#sql = sql;
    this.#hub = hub;
    this.#onError = onError;
    this.notices = new StatementNotices(hub.origin, () => this.#peers.any(), {
      windowMs: peerTimes.noticeWindowMs ?? NOTICE_WINDOW_MS,
      flush: (events) => this.outbox.send(events),
    });
    this.#peers = new Peers(
      peerTimes,
      // After the statements sent silent before it (statement-notices.ts: a 'here' covers the changes they made).
      // The events held (statement-notices.ts) go first: a peer hears a change before a 'bye'.
      (message) =>
        this.notices.afterSilent(() => {
          this.notices.flushHeld();
          this.outbox.sendControl(message);
        }),
      () => hub.resync(endpoints, onError),
    );
    this.outbox = new NotificationOutbox(sql, hub.origin, onError, () => this.#peers.any());
  }

  /** Start listening; with `watched`, its clock is measured again each time the connection comes back. */
  listen(endpoints: () => Promise<string[]>, watched: WatchedClock | undefined): Promise<void> {
    const reconnected = watched ? () => this.#checkClock(watched) : () => undefined;
    return this.#hub.listen(this.#sql, endpoints, this.#onError, this.#peers, reconnected);
  }

  /** The error changing calls get while the clock is beyond its bound, else undefined. */
  get refused(): Error | undefined {
    return this.#refused;
  }

  /** Stop the clock's rechecks, send the events still held, say goodbye to the peers (unless the database does not answer), stop listening. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#recheck?.cancel();
    // The events the hot statements held (statement-notices.ts) go before the 'bye'.
    this.notices.flushHeld();
    this.#peers.close();
    await withinTime(
      this.notices.controlsQueued().then(() => this.outbox.flushed()),
      CLOSE_FLUSH_MS,
      undefined,
      systemClock,
      false,
    );
    await this.#hub.close();
  }

  /** Measure the clock again (the connection came back): refuse changes while it is beyond the bound, and look again until it is not. */
  #checkClock(watched: WatchedClock): void {
    measureClockSkew(this.#sql, () => watched.clock.now()).then((skew) => {
      this.#refused = skewRefusal(skew, watched.maxSkewMs);
      if (this.#refused) this.#onError(this.#refused);
      if (this.#refused && !this.#closed) {
        this.#recheck ??= systemClock.setTimer(SKEW_RECHECK_MS, () => {
          this.#recheck = undefined;
          this.#checkClock(watched);
        });
      }
    }, this.#onError);
  }
}
