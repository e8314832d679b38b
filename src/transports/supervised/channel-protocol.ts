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
import * as z from 'zod';

export { SUPERVISED_CHANNEL_ENV, SUPERVISED_CHANNEL_IPC } from './channel-env.js';

const RequestId = z.number().int().min(0);
const Attempt = z.number().int().min(1).optional();

export const ChildMessageSchema = z.discriminatedUnion('k', [
  z.object({ k: z.literal('take'), id: RequestId, max: z.number().int().min(1).max(1024) }),
  z.object({ k: z.literal('cancel'), id: RequestId }),
  z.object({ k: z.literal('done'), id: RequestId, job: z.string().min(1), attempt: Attempt, body: z.string() }),
  z.object({ k: z.literal('stream'), id: RequestId, job: z.string().min(1), attempt: Attempt, body: z.string() }),
]);
export type ChildMessage = z.infer<typeof ChildMessageSchema>;
export const ChildBatchSchema = z.array(ChildMessageSchema).min(1);

export const SupervisorMessageSchema = z.discriminatedUnion('k', [
  /** `text`: a JSON array of jobs, as a job-take-batch answer ('[]': none). */
  z.object({ k: z.literal('jobs'), id: RequestId, text: z.string() }),
  z.object({ k: z.literal('answer'), id: RequestId, answer: z.record(z.string(), z.unknown()) }),
  z.object({ k: z.literal('error'), id: RequestId, code: z.string(), message: z.string(), status: z.number().int() }),
]);
export type SupervisorMessage = z.infer<typeof SupervisorMessageSchema>;
export const SupervisorBatchSchema = z.array(SupervisorMessageSchema).min(1);

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
