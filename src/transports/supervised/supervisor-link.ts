/**
 * @module transports/supervised/supervisor-link
 * The child's end of the IPC channel to its `--serve-api` supervisor: numbered requests
 * (take, done, stream), their answers matched back by number, what is said within one
 * turn of the event loop sent as one message (channel-protocol.ts). The channel keeps
 * the process alive only while a request waits for its answer.
 */
import type { Logger } from 'pino';
import { MessageBatcher, readSupervisorBatch, type ChildMessage } from './channel-protocol.js';

/** A post's answer: the reply body, or why it was refused (`status` 0: the channel is closed). */
export type PostReply =
  | { readonly ok: true; readonly answer: Readonly<Record<string, unknown>> }
  | { readonly ok: false; readonly code: string; readonly message: string; readonly status: number };

/** What the link needs of the process: Node's IPC methods (`process` in a child forked with an 'ipc' stdio). */
export interface IpcPort {
  send?: ((message: unknown, sendHandle?: undefined, options?: undefined, callback?: (error: Error | null) => void) => boolean) | undefined;
  readonly connected?: boolean;
  readonly channel?: { ref(): void; unref(): void } | null | undefined;
  on(event: 'message', listener: (message: unknown) => void): unknown;
  on(event: 'disconnect', listener: () => void): unknown;
  off(event: 'message', listener: (message: unknown) => void): unknown;
  off(event: 'disconnect', listener: () => void): unknown;
}

type Waiting =
  { readonly kind: 'take'; readonly resolve: (text: string | undefined) => void } | { readonly kind: 'post'; readonly resolve: (reply: PostReply) => void };

const CLOSED: PostReply = { ok: false, code: 'SW_CHANNEL_CLOSED', message: 'the IPC channel to the --serve-api process is closed', status: 0 };

export class SupervisorLink {
  readonly #port: IpcPort;
  readonly #logger: Logger;
  readonly #waiting = new Map<number, Waiting>();
  readonly #out: MessageBatcher<ChildMessage>;
  #nextId = 0;
  #open: boolean;

  constructor(port: IpcPort, logger: Logger) {
    this.#port = port;
    this.#logger = logger;
    this.#open = port.send !== undefined && port.connected === true;
    this.#out = new MessageBatcher((batch) => this.#send(batch));
    port.on('message', this.#onMessage);
    port.on('disconnect', this.#onDisconnect);
    port.channel?.unref();
  }

  /** Whether the channel is there to use. */
  get open(): boolean {
    return this.#open;
  }

  /** Up to `max` jobs as a JSON array's text, once the supervisor has one; undefined once `signal` aborts. A closed channel waits for the abort (the orphaned child exits meanwhile). */
  take(max: number, signal: AbortSignal): Promise<string | undefined> {
    if (signal.aborted) return Promise.resolve(undefined);
    if (!this.#open) return new Promise((resolve) => signal.addEventListener('abort', () => resolve(undefined), { once: true }));
    const id = this.#nextId++;
    return new Promise((resolve) => {
      const onAbort = (): void => {
        // An answer already on its way is dropped: its jobs are this worker's, requeued by the heartbeat's reconcile or when it exits.
        if (!this.#waiting.delete(id)) return;
        this.#queue({ k: 'cancel', id });
        this.#refresh();
        resolve(undefined);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.#wait(id, {
        kind: 'take',
        resolve: (text) => {
          signal.removeEventListener('abort', onAbort);
          resolve(text);
        },
      });
      this.#queue({ k: 'take', id, max });
    });
  }

  /** A job-done or job-stream body; answers the supervisor's reply. */
  post(kind: 'done' | 'stream', job: string, attempt: number | undefined, body: string): Promise<PostReply> {
    if (!this.#open) return Promise.resolve(CLOSED);
    const id = this.#nextId++;
    return new Promise((resolve) => {
      this.#wait(id, { kind: 'post', resolve });
      this.#queue({ k: kind, id, job, ...(attempt !== undefined ? { attempt } : {}), body });
    });
  }

  /** Stop listening; requests still waiting are answered as on a closed channel. */
  close(): void {
    this.#port.off('message', this.#onMessage);
    this.#port.off('disconnect', this.#onDisconnect);
    this.#onDisconnect();
  }

  #wait(id: number, waiting: Waiting): void {
    this.#waiting.set(id, waiting);
    if (this.#waiting.size === 1) this.#port.channel?.ref();
  }

  #refresh(): void {
    if (this.#waiting.size === 0) this.#port.channel?.unref();
  }

  #queue(message: ChildMessage): void {
    this.#out.push(message);
  }

  #send(batch: ChildMessage[]): void {
    if (!this.#open || this.#port.send === undefined) return;
    try {
      this.#port.send(batch, undefined, undefined, (error) => {
        if (error) this.#logger.warn({ err: error }, 'a message to the --serve-api process could not be sent');
      });
    } catch (error) {
      // The channel closed under us: 'disconnect' answers what waits.
      this.#logger.warn({ err: error }, 'a message to the --serve-api process could not be sent');
    }
  }

  readonly #onMessage = (message: unknown): void => {
    const read = readSupervisorBatch(message);
    if (!read.ok) {
      this.#logger.error({ problem: read.problem }, `a message from the --serve-api process is not one of the channel protocol (${read.problem}); ignored`);
      return;
    }
    for (const reply of read.batch) {
      const waiting = this.#waiting.get(reply.id);
      if (waiting === undefined) {
        if (reply.k === 'jobs' && reply.text !== '[]')
          this.#logger.warn({ id: reply.id }, 'jobs arrived for a take already given up; they go back to the queue with this worker');
        continue;
      }
      this.#waiting.delete(reply.id);
      if (waiting.kind === 'take') waiting.resolve(reply.k === 'jobs' ? reply.text : '[]');
      else if (reply.k === 'answer') waiting.resolve({ ok: true, answer: reply.answer });
      else if (reply.k === 'error') waiting.resolve({ ok: false, code: reply.code, message: reply.message, status: reply.status });
      else waiting.resolve({ ok: false, code: 'SW_CHANNEL_PROTOCOL', message: 'the --serve-api process answered a post with jobs', status: 0 });
    }
    this.#refresh();
  };

  readonly #onDisconnect = (): void => {
    this.#open = false;
    const waiting = [...this.#waiting.values()];
    this.#waiting.clear();
    this.#port.channel?.unref();
    for (const entry of waiting) {
      if (entry.kind === 'take') entry.resolve(undefined);
      else entry.resolve(CLOSED);
    }
  };
}
