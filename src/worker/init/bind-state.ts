/**
 * @module worker/init/bind-state
 * Hand init's value to every job as `ctx.state`. The runtime builds one context per
 * job; the state is set on it before the author's handler sees it, so the runtime
 * itself need not know about init.
 */
import type { Handler, JobContext } from '../handler.js';

/** `handler` with `ctx.state` set to `state` on every call. */
export function bindState<State>(handler: Handler<unknown, State>, state: State): Handler<unknown> {
  return (job, ctx) => {
    (ctx as { state: unknown }).state = state;
    return handler(job, ctx as unknown as JobContext<State>);
  };
}
