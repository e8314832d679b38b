/**
 * @module harness/store/postgres/notification-outbox
 * This process's store events, sent to the other processes after their change has
 * committed: the events of the rarer changes (cancel, progress, the due sweep, retries) and
 * the control messages of peers.ts. The hot statements (submission, claim, result) notify in
 * their own statement instead (statement-notices.ts, issue 47: with two harnesses this
 * outbox's statement after each change doubled the transactions a job). Here a changing
 * statement does not notify itself: PostgreSQL serializes every
 * transaction that notifies, through its commit's WAL flush (`PreCommit_Notify` takes a
 * lock on the notification queue and keeps it to the end of the transaction), so job
 * changes that notify cannot share a flush. Here the changes commit without it, and their
 * events follow in notification-only statements: one in flight at a time, carrying every
 * event of the turn of the event loop (sent once the turn is over: setImmediate) or
 * queued meanwhile (in order, packed into payloads under the size limit), each
 * committed with `synchronous_commit` off for its own transaction only (a notification
 * writes no data; its commit need not wait for the disk, and so holds that lock briefly).
 *
 * What this costs: an event reaches other processes one statement after the commit
 * instead of at it (never before the change is visible, as before); and a process that
 * dies between a commit and its notification leaves the other processes to find that
 * change by their own means: a parked take looks again within a second, the scheduler
 * asks the store at least every second, a /runsync or /status-sync reads the job again at
 * the end of its wait, and a stop reaches its worker at its next heartbeat. Nothing the
 * store holds is lost. A notification that fails (the connection lost) is tried again.
 * Events are dropped, not queued, while no other harness listens (peers.ts): a late
 * joiner is told to read again instead.
 */
import type postgres from 'postgres';
import { sleep, type StoreEvent } from 'serverless-worker/internal';
import { CHANNEL, encodePayloads, peerPayload } from './notifications.js';
import type { PeerMessage } from './peers.js';

/** Tries of one batch before its events are given up (reported through onError). */
const TRIES = 3;
/** Pause before a batch is tried again, ms (doubled each time). */
const RETRY_DELAY_MS = 100;
/** Events sent in one statement at most (more wait for the next one). */
const MAX_EVENTS_PER_STATEMENT = 2_000;

export class NotificationOutbox {
  readonly #sql: postgres.Sql;
  readonly #origin: string;
  readonly #onError: (error: unknown) => void;
  readonly #anyone: () => boolean;
  #pending: StoreEvent[] = [];
  #controls: PeerMessage[] = [];
  #sending: Promise<void> | undefined;

  /** `anyone`: whether another process listens now (peers.ts); events are sent only then. */
  constructor(sql: postgres.Sql, origin: string, onError: (error: unknown) => void, anyone: () => boolean) {
    this.#sql = sql;
    this.#anyone = anyone;
    this.#origin = origin;
    this.#onError = onError;
  }

  /** Send `events` to the other processes (their change committed): once this turn of the event loop is over, or after the statement in flight. */
  send(events: readonly StoreEvent[]): void {
    if (events.length === 0 || !this.#anyone()) return;
    this.#pending.push(...events);
    this.#start();
  }

  /** Send a control message to the other processes (peers.ts), after the events queued before it. */
  sendControl(message: PeerMessage): void {
    this.#controls.push(message);
    this.#start();
  }

  #start(): void {
    this.#sending ??= new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.#drain());
  }

  /** Resolves once every event sent so far has been notified (or given up). */
  async flushed(): Promise<void> {
    while (this.#sending) await this.#sending;
  }

  async #drain(): Promise<void> {
    try {
      while (this.#pending.length > 0 || this.#controls.length > 0) {
        if (this.#pending.length === 0) {
          await this.#notify(this.#controls.splice(0).map((message) => peerPayload(this.#origin, message)));
          continue;
        }
        const batch = this.#pending.splice(0, MAX_EVENTS_PER_STATEMENT);
        let payloads: string[];
        try {
          payloads = encodePayloads(this.#origin, batch);
        } catch (error) {
          // An event that cannot be encoded is reported; the others of later batches still go.
          this.#onError(
            new Error(
              `Job store events could not be encoded for other harness processes (they see these changes at their next look: a take within a second, a /runsync at the end of its wait): ${String(error)}`,
            ),
          );
          continue;
        }
        await this.#notify(payloads);
      }
    } finally {
      this.#sending = undefined;
    }
  }

  async #notify(payloads: readonly string[]): Promise<void> {
    for (let tried = 1; ; tried++) {
      try {
        // One statement, one transaction: synchronous_commit off for it alone (set_config's
        // third argument), read at its commit.
        await this.#sql`
          SELECT set_config('synchronous_commit', 'off', true) AS commit_mode,
            (SELECT count(pg_notify(${CHANNEL}, payload)) FROM unnest(${this.#sql.array([...payloads])}::text[]) AS payload) AS sent`;
        return;
      } catch (error) {
        if (tried >= TRIES) {
          this.#onError(
            new Error(
              `Job store events not sent to other harness processes after ${TRIES} tries (they see these changes at their next look: a take within a second, a /runsync at the end of its wait; check the connection to PostgreSQL): ${String(error)}`,
            ),
          );
          return;
        }
        await sleep(RETRY_DELAY_MS * 2 ** (tried - 1));
      }
    }
  }
}
