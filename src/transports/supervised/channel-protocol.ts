/**
 * @module transports/supervised/channel-protocol
 * The messages between the worker child of `--serve-api` and its supervisor, over the
 * child's IPC channel (Node's `'ipc'` stdio, JSON). Each `send` carries an array of
 * messages: what one side has to say within one turn of its event loop goes together.
 * Bodies travel as the text an HTTP worker would post (job-done, job-stream), and jobs as
 * the text of a job-take-batch answer, so that the supervisor runs the worker API's own
 * checks on them and passes an input kept as text (job/raw-json.ts) on unparsed.
 *
 * Jobs are pushed (issue 34): the child says once how many jobs it can hold at a time
 * (`credit`: its slots), and the supervisor keeps one standing take for it and sends each
 * job as soon as it is taken, while fewer than that many are out with the child. A job
 * is out from its push until its result (`result`) or its `free` arrives: the slot comes
 * back with them, with no message back. A result is answered (`answer`, `error`) only
 * when it was not applied; an applied one is confirmed by its id in an `applied` message,
 * which rides with the next jobs (a message of its own only after a quiet moment).
 *
 * Child to supervisor: `credit` (slots, replacing the last figure), `result` (a final
 * job-done body), `free` (a pushed job that ended without a result: cancelled, expired,
 * unreadable), `done` (a job-done body answered at once: progress), `stream` (a
 * job-stream body), `timeouts` (once, at start: the child's default execution timeout and
 * its grace, for the deadlines the supervisor watches), `tick` (while it holds jobs, every
 * TICK_MS: its event loop turns). Supervisor to child: `jobs` (pushed jobs), `stops` (jobs
 * out with the child to stop: cancelled, timed out or expired, with the attempt when known),
 * `applied` (results applied), `answer` (a post's reply body), `error` (a post refused: the
 * code, message and HTTP status the route would answer).
 *
 * The child runs no heartbeat or watchdog thread of its own (a V8 isolate: about 13 MiB on
 * Node 24): its supervisor pings for it, and times out a job whose child went silent past
 * the job's deadline plus grace (local/child-watch.ts in the platform package). Nor does it
 * poll job-stop over HTTP: the supervisor keeps the worker API's job-stop wait for it and
 * sends what comes as `stops`.
 */
import type { StopReason } from '../../job/index.js';

export { SUPERVISED_CHANNEL_ENV, SUPERVISED_CHANNEL_IPC } from './channel-env.js';

/** The most slots a child may announce (the highest concurrency a worker may have). */
export const MAX_SLOTS = 10_000;

/** How often a child that holds jobs says its event loop turns (`tick`), ms. */
export const TICK_MS = 500;

/** Child to supervisor. `id` numbers a request (an integer >= 0); `attempt`, when given, is an integer >= 1. */
export type ChildMessage =
  | { readonly k: 'credit'; readonly slots: number }
  | { readonly k: 'timeouts'; readonly defaultMs: number; readonly graceMs: number }
  | { readonly k: 'tick' }
  | { readonly k: 'free'; readonly job: string; readonly attempt?: number | undefined }
  | { readonly k: 'result' | 'done' | 'stream'; readonly id: number; readonly job: string; readonly attempt?: number | undefined; readonly body: string };

/** A job to stop, as a `stops` message lists it. */
export interface ChannelStop {
  readonly job: string;
  readonly reason: StopReason;
  readonly attempt?: number | undefined;
}

/** Supervisor to child. `text` of `jobs`: a JSON array of jobs, as a job-take-batch answer. */
export type SupervisorMessage =
  | { readonly k: 'jobs'; readonly text: string }
  | { readonly k: 'stops'; readonly stops: readonly ChannelStop[] }
  | { readonly k: 'applied'; readonly ids: readonly number[] }
  | { readonly k: 'answer'; readonly id: number; readonly answer: Readonly<Record<string, unknown>> }
  | { readonly k: 'error'; readonly id: number; readonly code: string; readonly message: string; readonly status: number };

/** A message refused: what was wrong with it, and its request id when it had a readable one (then it can be answered). */
export interface MessageFault {
  readonly index: number;
  readonly id?: number;
  readonly problem: string;
}

/**
 * A batch as read: its well-formed messages, and each malformed one's fault. A batch that
 * is not a non-empty array is one fault (index -1); a malformed message does not cost the
 * good ones beside it.
 */
export interface ReadBatch<Message> {
  readonly batch: readonly Message[];
  readonly faults: readonly MessageFault[];
}

// Hand-written checks rather than zod: both ends are this package's own code, and a zod
// parse of every message was a visible share of a busy --serve-api's CPU (bench/README,
// issue 34, second pass).
type Entry = Record<string, unknown>;
const isObject = (value: unknown): value is Entry => typeof value === 'object' && value !== null && !Array.isArray(value);
const isInteger = (value: unknown, min: number): value is number => typeof value === 'number' && Number.isInteger(value) && value >= min;
const shown = (value: unknown): string => (value === undefined ? 'undefined' : (JSON.stringify(value)?.slice(0, 60) ?? String(value)));

function jobFault(entry: Entry): string | undefined {
  if (typeof entry.job !== 'string' || entry.job === '') return `job ${shown(entry.job)} is not a job id (a non-empty string)`;
  if (entry.attempt !== undefined && !isInteger(entry.attempt, 1)) return `attempt ${shown(entry.attempt)} is not an integer >= 1`;
  return undefined;
}

function childFault(entry: Entry): string | undefined {
  switch (entry.k) {
    case 'credit':
      return isInteger(entry.slots, 0) && entry.slots <= MAX_SLOTS ? undefined : `slots ${shown(entry.slots)} is not an integer from 0 to ${MAX_SLOTS}`;
    case 'timeouts':
      if (!isInteger(entry.defaultMs, 1)) return `defaultMs ${shown(entry.defaultMs)} is not an integer >= 1`;
      return isInteger(entry.graceMs, 0) ? undefined : `graceMs ${shown(entry.graceMs)} is not an integer >= 0`;
    case 'tick':
      return undefined;
    case 'free':
      return jobFault(entry);
    case 'result':
    case 'done':
    case 'stream':
      if (!isInteger(entry.id, 0)) return `id ${shown(entry.id)} is not an integer >= 0`;
      return jobFault(entry) ?? (typeof entry.body === 'string' ? undefined : `body ${shown(entry.body)} is not a string (the JSON text of the post)`);
    default:
      return `k ${shown(entry.k)} is not one of "credit", "timeouts", "tick", "result", "free", "done", "stream"`;
  }
}

const STOP_REASONS: ReadonlySet<unknown> = new Set<StopReason>(['cancelled', 'timeout', 'expired']);

function stopFault(stop: unknown): string | undefined {
  if (!isObject(stop)) return `a stop ${shown(stop)} is not an object`;
  const fault = jobFault(stop);
  if (fault !== undefined) return `a stop's ${fault}`;
  return STOP_REASONS.has(stop.reason) ? undefined : `a stop's reason ${shown(stop.reason)} is not one of "cancelled", "timeout", "expired"`;
}

function supervisorFault(entry: Entry): string | undefined {
  switch (entry.k) {
    case 'jobs':
      return typeof entry.text === 'string' ? undefined : `text ${shown(entry.text)} is not a string (a JSON array of jobs)`;
    case 'stops':
      if (!Array.isArray(entry.stops) || entry.stops.length === 0) return `stops ${shown(entry.stops)} is not a non-empty array`;
      for (const stop of entry.stops as unknown[]) {
        const fault = stopFault(stop);
        if (fault !== undefined) return fault;
      }
      return undefined;
    case 'applied':
      return Array.isArray(entry.ids) && entry.ids.every((id) => isInteger(id, 0)) ? undefined : `ids ${shown(entry.ids)} is not an array of integers >= 0`;
    case 'answer':
      if (!isInteger(entry.id, 0)) return `id ${shown(entry.id)} is not an integer >= 0`;
      return isObject(entry.answer) ? undefined : `answer ${shown(entry.answer)} is not an object`;
    case 'error':
      if (!isInteger(entry.id, 0)) return `id ${shown(entry.id)} is not an integer >= 0`;
      if (typeof entry.code !== 'string' || typeof entry.message !== 'string') return 'an error without a string code and message';
      return isInteger(entry.status, Number.MIN_SAFE_INTEGER) ? undefined : `status ${shown(entry.status)} is not an integer`;
    default:
      return `k ${shown(entry.k)} is not one of "jobs", "stops", "applied", "answer", "error"`;
  }
}

function readBatch<Message>(message: unknown, fault: (entry: Entry) => string | undefined): ReadBatch<Message> {
  if (!Array.isArray(message) || message.length === 0)
    return { batch: [], faults: [{ index: -1, problem: `expected a non-empty array of messages, got ${shown(message)}` }] };
  let faults: MessageFault[] | undefined;
  for (let i = 0; i < message.length; i++) {
    const entry: unknown = message[i];
    const problem = isObject(entry) ? fault(entry) : `not an object: ${shown(entry)}`;
    if (problem === undefined) continue;
    const id = isObject(entry) && isInteger(entry.id, 0) ? entry.id : undefined;
    (faults ??= []).push({ index: i, ...(id !== undefined ? { id } : {}), problem: `message ${i}: ${problem}` });
  }
  if (faults === undefined) return { batch: message as Message[], faults: [] };
  const bad = new Set(faults.map((entry) => entry.index));
  return { batch: message.filter((_, i) => !bad.has(i)) as Message[], faults };
}

/** A message the supervisor received from its child, checked: a non-empty array of ChildMessage. */
export const readChildBatch = (message: unknown): ReadBatch<ChildMessage> => readBatch(message, childFault);

/** A message the child received from its supervisor, checked: a non-empty array of SupervisorMessage. */
export const readSupervisorBatch = (message: unknown): ReadBatch<SupervisorMessage> => readBatch(message, supervisorFault);

/**
 * Messages queued within one turn of the event loop, sent together as one array at its
 * end (setImmediate): one write and one parse for what several jobs said at once. `tail`,
 * when given, may add one last message to each batch (the supervisor's `applied`), and
 * `poke` sends a batch of the tail alone.
 */
export class MessageBatcher<Message> {
  #queued: Message[] = [];
  #armed = false;
  readonly #send: (batch: Message[]) => void;
  readonly #tail: (() => Message | undefined) | undefined;

  constructor(send: (batch: Message[]) => void, tail?: () => Message | undefined) {
    this.#send = send;
    this.#tail = tail;
  }

  push(message: Message): void {
    this.#queued.push(message);
    this.poke();
  }

  /** Flush at the end of this turn, even with nothing queued (the tail may have something to say). */
  poke(): void {
    if (this.#armed) return;
    this.#armed = true;
    setImmediate(this.#flush);
  }

  readonly #flush = (): void => {
    this.#armed = false;
    const batch = this.#queued;
    const tail = this.#tail?.();
    if (tail !== undefined) batch.push(tail);
    if (batch.length === 0) return;
    this.#queued = [];
    this.#send(batch);
  };
}
