/**
 * @module harness/store/postgres/peers
 * Which other harness processes listen on the store's channel, so that a harness alone
 * sends no notifications (issue 33: with one harness, every change's notification went
 * out and came back to be dropped). Each store LISTENs always; it sends its events only
 * while it knows a peer. Peers learn of each other by control notifications:
 *
 * - 'hello': a store started (or re-started) listening. Every store that hears it
 *   answers 'here'.
 * - 'here': "I am listening, and may not have told you of my changes until now": the
 *   receiver wakes every waiter of its own ('resync': each reads again), so a harness
 *   that joins late misses no change made while the others did not know it yet.
 * - 'beat': sent every `beatMs` while a store knows a peer; a peer not heard from for
 *   `silentMs` is forgotten (a harness that died without its 'bye').
 * - 'bye': a store closes.
 *
 * Any message from a peer not known (or forgotten) makes the receiver answer 'here':
 * it may have skipped that peer's notifications. The race a late joiner runs (a change
 * committed while its hello is on the way) is closed by that answer: it is sent after
 * the sender knows the joiner, so every change whose notification was skipped committed
 * before it, and the joiner reads them when it wakes.
 */
import { type Clock, repeatEvery, systemClock, type TimerHandle } from 'serverless-worker/internal';

export type PeerMessage = 'hello' | 'here' | 'beat' | 'bye';

export interface PeerTimes {
  /** How often a store that knows a peer says it is alive, ms. */
  readonly beatMs: number;
  /** How long a peer may stay silent before it is forgotten, ms. */
  readonly silentMs: number;
  /**
   * At most one hot statement notifies the peers in this window, ms; the others' events ride on a later one
   * (statement-notices.ts). Default NOTICE_WINDOW_MS (100); 0: every statement notifies.
   */
  readonly noticeWindowMs?: number;
}

export const PEER_TIMES: PeerTimes = { beatMs: 10_000, silentMs: 35_000 };

export class Peers {
  readonly #times: PeerTimes;
  readonly #send: (message: PeerMessage) => void;
  readonly #resync: () => void;
  /** Peers by origin: when last heard from (this process's monotonic time, ms). */
  readonly #heard = new Map<string, number>();
  #timer: TimerHandle | undefined;
  readonly #clock: Clock;

  /** `send`: a control notification to every peer; `resync`: wake every waiter of this process. */
  constructor(times: PeerTimes, send: (message: PeerMessage) => void, resync: () => void, clock: Clock = systemClock) {
    this.#times = times;
    this.#clock = clock;
    this.#send = send;
    this.#resync = resync;
  }

  /** Listening (first time, or again after a lost connection): say hello, and beat while peers are known. */
  listening(): void {
    this.#send('hello');
    this.#timer ??= repeatEvery(this.#clock, this.#times.beatMs, () => {
      if (this.any()) this.#send('beat');
    });
  }

  /** Whether any peer listens now (events are sent only then). */
  any(): boolean {
    const now = this.#clock.now();
    for (const [origin, at] of this.#heard) if (now - at > this.#times.silentMs) this.#heard.delete(origin);
    return this.#heard.size > 0;
  }

  /** A notification from `origin` (another process): `message` when it is a control one. */
  heard(origin: string, message: PeerMessage | undefined): void {
    if (message === 'bye') {
      this.#heard.delete(origin);
      return;
    }
    const known = this.any() && this.#heard.has(origin);
    this.#heard.set(origin, this.#clock.now());
    if (message === 'here') this.#resync();
    if (message === 'hello' || !known) this.#send('here');
  }

  /** Closing: stop beating, tell the peers. */
  close(): void {
    this.#timer?.cancel();
    this.#timer = undefined;
    if (this.#heard.size > 0) this.#send('bye');
    this.#heard.clear();
  }
}
