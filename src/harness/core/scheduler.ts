/**
 * @module harness/core/scheduler
 * The harness's time rules on its Clock. The job store decides what is due (ttl,
 * execution timeouts, retention are deadlines on its jobs); the scheduler keeps one
 * clock timer armed for the earliest, calls `applyDue(now)` when it fires, and hands
 * what that did (jobs ended: webhooks, metrics) to the harness. With a store whose
 * deadlines live in this process (`peekNextDueAt`), it re-arms within the same clock
 * tick and on every store event, so a ManualClock advance applies each deadline at its
 * own time; with a shared store it asks `nextDueAt` after each applyDue and on events,
 * and looks again at least every `pollMs` (deadlines set by other processes). An event
 * that names the deadline its change set (`due`: a submit's ttl, a take's execution
 * timeout, an end's retention) arms the timer for it without asking the store: a
 * question per event was the most frequent statement of a busy shared store.
 *
 * `repeat` runs a periodic task on the same clock (the worker API's liveness sweep, armed
 * for the next time a worker could be silent too long).
 */
import type { Clock, TimerHandle } from '../../clock/index.js';
import type { DueOutcome, JobStore } from '../store/job-store.js';

export interface SchedulerOptions {
  /** What an applyDue did; the harness fires jobEnded for `ended`. */
  readonly onDue: (outcome: DueOutcome) => void;
  /** A store call failed; the scheduler tries again at the next poll. */
  readonly onError: (error: unknown) => void;
  /** With a store without peekNextDueAt: the longest the scheduler goes without asking nextDueAt, ms; default 1 000. */
  readonly pollMs?: number;
}

const DEFAULT_POLL_MS = 1_000;

export class Scheduler {
  readonly #store: JobStore;
  readonly #clock: Clock;
  readonly #options: SchedulerOptions;
  readonly #unsubscribe: () => void;
  #timer: TimerHandle | undefined;
  #timerDue = Number.POSITIVE_INFINITY;
  /** A nextDueAt question is under way (shared stores). */
  #asking = false;
  #askAgain = false;
  /** The earliest deadline events named while a nextDueAt question was under way (its answer may not include them). */
  #dueWhileAsking = Number.POSITIVE_INFINITY;
  #closed = false;

  constructor(store: JobStore, clock: Clock, options: SchedulerOptions) {
    this.#store = store;
    this.#clock = clock;
    this.#options = options;
    this.#unsubscribe = store.subscribe((event) => {
      if (event.type === 'resync') this.#rearm();
      else if (event.type === 'queued' || event.type === 'changed') {
        if (event.due !== undefined && !this.#store.peekNextDueAt) this.#noteDue(event.due);
        else this.#rearm();
      }
    });
    this.#rearm();
  }

  /**
   * Run `task` every `intervalMs` on the clock until the answered handle is cancelled.
   * The next run is armed when the task's promise settles, so runs never overlap. A
   * function for `intervalMs` is asked each time (a task that knows when it is next due).
   */
  repeat(intervalMs: number | (() => number), task: () => void | Promise<void>): TimerHandle {
    let timer: TimerHandle | undefined;
    let cancelled = false;
    const arm = (): void => {
      if (cancelled || this.#closed) return;
      timer = this.#clock.setTimer(typeof intervalMs === 'number' ? intervalMs : intervalMs(), () => {
        Promise.resolve()
          .then(task)
          .catch((error: unknown) => this.#options.onError(error))
          .finally(arm);
      });
    };
    arm();
    return {
      cancel: () => {
        cancelled = true;
        timer?.cancel();
      },
    };
  }

  /** Stop: no timer stays armed. */
  close(): void {
    this.#closed = true;
    this.#unsubscribe();
    this.#disarm();
  }

  /** A change set a deadline at `due`: a timer armed no later covers it (a shared store). */
  #noteDue(due: number): void {
    if (this.#closed) return;
    if (this.#asking) this.#dueWhileAsking = Math.min(this.#dueWhileAsking, due);
    this.#armFor(due);
  }

  #rearm(): void {
    if (this.#closed) return;
    const peek = this.#store.peekNextDueAt?.bind(this.#store);
    if (peek) {
      this.#armFor(peek());
      return;
    }
    if (this.#asking) {
      this.#askAgain = true;
      return;
    }
    this.#asking = true;
    this.#dueWhileAsking = Number.POSITIVE_INFINITY;
    this.#store
      .nextDueAt()
      .then((due) => {
        const poll = this.#clock.now() + (this.#options.pollMs ?? DEFAULT_POLL_MS);
        this.#armFor(Math.min(due ?? poll, poll, this.#dueWhileAsking), true);
      })
      .catch((error: unknown) => {
        this.#options.onError(error);
        this.#armFor(Math.min(this.#clock.now() + (this.#options.pollMs ?? DEFAULT_POLL_MS), this.#dueWhileAsking), true);
      })
      .finally(() => {
        this.#asking = false;
        if (this.#askAgain) {
          this.#askAgain = false;
          this.#rearm();
        }
      });
  }

  /** Arm the timer for `due` when it is earlier than the one armed (or replace it, `replace`); none when undefined. */
  #armFor(due: number | undefined, replace = false): void {
    if (this.#closed) return;
    if (due === undefined) {
      this.#disarm();
      return;
    }
    if (this.#timer !== undefined && (replace ? this.#timerDue === due : this.#timerDue <= due)) return;
    this.#disarm();
    this.#timerDue = due;
    this.#timer = this.#clock.setTimer(due - this.#clock.now(), () => this.#fire());
  }

  #disarm(): void {
    this.#timer?.cancel();
    this.#timer = undefined;
    this.#timerDue = Number.POSITIVE_INFINITY;
  }

  #fire(): void {
    this.#timer = undefined;
    this.#timerDue = Number.POSITIVE_INFINITY;
    if (this.#closed) return;
    const applying = this.#store.applyDue(this.#clock.now());
    // A store with peekNextDueAt did its work before answering: arm for the next deadline now.
    if (this.#store.peekNextDueAt) this.#rearm();
    applying
      .then((outcome) => {
        if (outcome.ended.length > 0 || outcome.stops.length > 0 || outcome.deleted.length > 0) this.#options.onDue(outcome);
      })
      .catch((error: unknown) => this.#options.onError(error))
      .finally(() => {
        if (!this.#store.peekNextDueAt) this.#rearm();
      });
  }
}
