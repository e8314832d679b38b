/**
 * @module worker/lifecycle-state
 * The worker's lifecycle as one state union with every allowed move in one table:
 * starting -> initializing (the author's start-up `init`) -> ready (taking jobs) ->
 * draining (no new jobs; running ones finish or are aborted) -> stopped. The dispatch
 * loop, the heartbeat/watchdog, the shutdown and the start-up phase all read it; every
 * change goes through `nextLifecycleState`, which refuses a move the table does not
 * list (a bug, not a user error).
 */
import { ServerlessWorkerError } from '../job/index.js';

export const LIFECYCLE_STATES = ['starting', 'initializing', 'ready', 'draining', 'stopped'] as const;
export type LifecycleState = (typeof LIFECYCLE_STATES)[number];

/**
 * Every allowed move. `starting` may skip `initializing` (no init) and may go straight
 * to `draining` (stopped before it took a job); `initializing` may drain (a signal or
 * a failed init). Nothing leaves `stopped`.
 */
export const LIFECYCLE_MOVES: Readonly<Record<LifecycleState, readonly LifecycleState[]>> = Object.freeze({
  starting: ['initializing', 'ready', 'draining'],
  initializing: ['ready', 'draining'],
  ready: ['draining'],
  draining: ['stopped'],
  stopped: [],
});

/** True when the table allows `from` -> `to`. */
export function canMoveLifecycle(from: LifecycleState, to: LifecycleState): boolean {
  return LIFECYCLE_MOVES[from].includes(to);
}

/**
 * `to`, when the table allows `from` -> `to`.
 * @throws ServerlessWorkerError SW_INTERNAL naming both states and the allowed moves.
 */
export function nextLifecycleState(from: LifecycleState, to: LifecycleState): LifecycleState {
  if (canMoveLifecycle(from, to)) return to;
  const allowed = LIFECYCLE_MOVES[from];
  throw new ServerlessWorkerError(
    'SW_INTERNAL',
    `Worker lifecycle cannot move from "${from}" to "${to}"; from "${from}" it can move to ${
      allowed.length > 0 ? allowed.map((state) => `"${state}"`).join(', ') : 'nothing (it has ended)'
    }`,
    { from, to, allowed: [...allowed] },
  );
}

/** Called after each move with the new and the previous state. */
export type LifecycleListener = (state: LifecycleState, previous: LifecycleState) => void;

/** One worker's lifecycle: the current state, moves through the table, listeners told of each move. */
export class Lifecycle {
  #state: LifecycleState = 'starting';
  readonly #listeners = new Set<LifecycleListener>();

  /** The state now; `starting` at first. */
  get state(): LifecycleState {
    return this.#state;
  }

  /** Move to `to`; throws SW_INTERNAL when the table does not allow it. */
  move(to: LifecycleState): void {
    const previous = this.#state;
    this.#state = nextLifecycleState(previous, to);
    for (const listener of this.#listeners) listener(to, previous);
  }

  /** Hear of every move from now on; answers the unsubscribe function. */
  onChange(listener: LifecycleListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
}
