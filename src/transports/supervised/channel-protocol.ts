/**
 * @module transports/supervised/channel-protocol
 * The messages between the worker child of `--serve-api` and its supervisor, over the
 * child's IPC channel (Node's `'ipc'` stdio, JSON). Each `send` carries an array of
 * messages: what one side has to say within one turn of its event loop goes together.
 * Bodies travel as the text an HTTP worker would post (job-done, job-stream), and jobs as
 * the text of a job-take-batch answer, so that the supervisor runs the worker API's own
 * checks on them and passes an input kept as text (job/raw-json.ts) on unparsed.
 *
 * Child to supervisor: `take` (long poll for up to `max` jobs), `cancel` (of a take),
 * `done` (a job-done body: result or progress), `stream` (a job-stream body).
 * Supervisor to child: `jobs` (a take's answer), `answer` (a post's reply body),
 * `error` (a post refused: the code, message and HTTP status the route would answer).
 */
export { SUPERVISED_CHANNEL_ENV, SUPERVISED_CHANNEL_IPC } from './channel-env.js';

/** The most jobs one `take` may ask for. */
export const MAX_TAKE = 1024;

/** Child to supervisor. `id` numbers a request (an integer >= 0); `attempt`, when given, is an integer >= 1. */
export type ChildMessage =
  | { readonly k: 'take'; readonly id: number; readonly max: number }
  | { readonly k: 'cancel'; readonly id: number }
  | { readonly k: 'done' | 'stream'; readonly id: number; readonly job: string; readonly attempt?: number | undefined; readonly body: string };

/** Supervisor to child. `text` of `jobs`: a JSON array of jobs, as a job-take-batch answer ('[]': none). */
export type SupervisorMessage =
  | { readonly k: 'jobs'; readonly id: number; readonly text: string }
  | { readonly k: 'answer'; readonly id: number; readonly answer: Readonly<Record<string, unknown>> }
  | { readonly k: 'error'; readonly id: number; readonly code: string; readonly message: string; readonly status: number };

/** A batch as read: its messages, or what is wrong with it (the first fault found), in words. */
export type ReadBatch<Message> = { readonly ok: true; readonly batch: readonly Message[] } | { readonly ok: false; readonly problem: string };

// Hand-written checks rather than zod: both ends are this package's own code, and a zod
// parse of every message was a visible share of a busy --serve-api's CPU (bench/README,
// issue 34, second pass). What they accept is what the zod schemas they replace accepted.
type Entry = Record<string, unknown>;
const isObject = (value: unknown): value is Entry => typeof value === 'object' && value !== null && !Array.isArray(value);
const isInteger = (value: unknown, min: number): value is number => typeof value === 'number' && Number.isInteger(value) && value >= min;
const shown = (value: unknown): string => (value === undefined ? 'undefined' : (JSON.stringify(value)?.slice(0, 60) ?? String(value)));

function childFault(entry: Entry): string | undefined {
  if (!isInteger(entry.id, 0)) return `id ${shown(entry.id)} is not an integer >= 0`;
  switch (entry.k) {
    case 'take':
      return isInteger(entry.max, 1) && entry.max <= MAX_TAKE ? undefined : `max ${shown(entry.max)} is not an integer from 1 to ${MAX_TAKE}`;
    case 'cancel':
      return undefined;
    case 'done':
    case 'stream':
      if (typeof entry.job !== 'string' || entry.job === '') return `job ${shown(entry.job)} is not a job id (a non-empty string)`;
      if (entry.attempt !== undefined && !isInteger(entry.attempt, 1)) return `attempt ${shown(entry.attempt)} is not an integer >= 1`;
      return typeof entry.body === 'string' ? undefined : `body ${shown(entry.body)} is not a string (the JSON text of the post)`;
    default:
      return `k ${shown(entry.k)} is not one of "take", "cancel", "done", "stream"`;
  }
}

function supervisorFault(entry: Entry): string | undefined {
  if (!isInteger(entry.id, 0)) return `id ${shown(entry.id)} is not an integer >= 0`;
  switch (entry.k) {
    case 'jobs':
      return typeof entry.text === 'string' ? undefined : `text ${shown(entry.text)} is not a string (a JSON array of jobs)`;
    case 'answer':
      return isObject(entry.answer) ? undefined : `answer ${shown(entry.answer)} is not an object`;
    case 'error':
      if (typeof entry.code !== 'string' || typeof entry.message !== 'string') return 'an error without a string code and message';
      return isInteger(entry.status, Number.MIN_SAFE_INTEGER) ? undefined : `status ${shown(entry.status)} is not an integer`;
    default:
      return `k ${shown(entry.k)} is not one of "jobs", "answer", "error"`;
  }
}

function readBatch<Message>(message: unknown, fault: (entry: Entry) => string | undefined): ReadBatch<Message> {
  if (!Array.isArray(message) || message.length === 0) return { ok: false, problem: `expected a non-empty array of messages, got ${shown(message)}` };
  for (let i = 0; i < message.length; i++) {
    const entry: unknown = message[i];
    const problem = isObject(entry) ? fault(entry) : `not an object: ${shown(entry)}`;
    if (problem !== undefined) return { ok: false, problem: `message ${i}: ${problem}` };
  }
  return { ok: true, batch: message as Message[] };
}

/** A message the supervisor received from its child, checked: a non-empty array of ChildMessage. */
export const readChildBatch = (message: unknown): ReadBatch<ChildMessage> => readBatch(message, childFault);

/** A message the child received from its supervisor, checked: a non-empty array of SupervisorMessage. */
export const readSupervisorBatch = (message: unknown): ReadBatch<SupervisorMessage> => readBatch(message, supervisorFault);

/**
 * Messages queued within one turn of the event loop, sent together as one array at its
 * end (setImmediate): one write and one parse for what several jobs said at once.
 */
export class MessageBatcher<Message> {
  #queued: Message[] = [];
  #armed = false;
  readonly #send: (batch: Message[]) => void;

  constructor(send: (batch: Message[]) => void) {
    this.#send = send;
  }

  push(message: Message): void {
    this.#queued.push(message);
    if (this.#armed) return;
    this.#armed = true;
    setImmediate(this.#flush);
  }

  readonly #flush = (): void => {
    this.#armed = false;
    const batch = this.#queued;
    if (batch.length === 0) return;
    this.#queued = [];
    this.#send(batch);
  };
}
