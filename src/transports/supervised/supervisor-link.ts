/**
 * @module transports/supervised/supervisor-link
 * The child's end of the IPC channel to its `--serve-api` supervisor (channel-protocol.ts):
 * the jobs the supervisor pushes, handed to a listener; the slots announced (`credit`);
 * numbered posts (result, done, stream), their answers matched back by number, a result
 * also by its id in an `applied` message; what is said within one turn of the event loop
 * sent as one message. The channel keeps the process alive only while a post waits for
 * its answer or a holder (a take waiting for jobs) holds it open.
 */
import type { Logger } from 'pino';
import { HeldMap } from '../../collections/held-map.js';
import { MessageBatcher, readSupervisorBatch, type ChannelStop, type ChildMessage } from './channel-protocol.js';

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

interface Waiting {
  readonly kind: 'result' | 'done' | 'stream';
  readonly resolve: (reply: PostReply) => void;
}

const CLOSED: PostReply = { ok: false, code: 'SW_CHANNEL_CLOSED', message: 'the IPC channel to the --serve-api process is closed', status: 0 };
const APPLIED: PostReply = { ok: true, answer: { acknowledged: true, applied: true } };

export class SupervisorLink {
  readonly #port: IpcPort;
  readonly #logger: Logger;
  /** Posts waiting for their reply, by id: a HeldMap, one comes and goes once a job (collections/held-map.ts). */
  readonly #waiting = new HeldMap<number, Waiting>();
  readonly #out: MessageBatcher<ChildMessage>;
  #nextId = 0;
  #open: boolean;
  #holders = 0;
  #slots = -1;
  #onJobs: ((text: string) => void) | undefined;
  #onStops: ((stops: readonly ChannelStop[]) => void) | undefined;

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

  /** Where pushed jobs go: the text of a JSON array of jobs, as a job-take-batch answer. */
  onJobs(listener: (text: string) => void): void {
    this.#onJobs = listener;
  }

  /** Where the supervisor's stops go: jobs out with this child to stop (cancelled, timed out, expired). */
  onStops(listener: (stops: readonly ChannelStop[]) => void): void {
    this.#onStops = listener;
  }

  /** How many jobs this child can hold at a time (0: push none); sent only when it changed. */
  credit(slots: number): void {
    if (slots === this.#slots || !this.#open) return;
    this.#slots = slots;
    this.#out.push({ k: 'credit', slots });
  }

  /** The child's default execution timeout and its grace (once, at start): the supervisor watches the deadlines. */
  timeouts(defaultMs: number, graceMs: number): void {
    if (this.#open) this.#out.push({ k: 'timeouts', defaultMs, graceMs });
  }

  /** The event loop turns (sent while jobs are held): the supervisor's watchdog hears the child. */
  tick(): void {
    if (this.#open) this.#out.push({ k: 'tick' });
  }

  /** A pushed job ended without a result (cancelled, expired, unreadable): its slot goes back. */
  free(job: string, attempt: number | undefined): void {
    if (this.#open) this.#out.push({ k: 'free', job, ...(attempt !== undefined ? { attempt } : {}) });
  }

  /** Keep the process alive until the answer is called (a take waiting for jobs). */
  hold(): () => void {
    this.#ref(1);
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      this.#ref(-1);
    };
  }

  /** A result (its slot goes back), progress (`done`) or stream chunk body; answers the supervisor's reply. */
  post(kind: 'result' | 'done' | 'stream', job: string, attempt: number | undefined, body: string): Promise<PostReply> {
    if (!this.#open) return Promise.resolve(CLOSED);
    const id = this.#nextId++;
    return new Promise((resolve) => {
      this.#waiting.set(id, { kind, resolve });
      this.#ref(1);
      this.#out.push({ k: kind, id, job, ...(attempt !== undefined ? { attempt } : {}), body });
    });
  }

  /** Stop listening; posts still waiting are answered as on a closed channel. */
  close(): void {
    this.#port.off('message', this.#onMessage);
    this.#port.off('disconnect', this.#onDisconnect);
    this.#onDisconnect();
  }

  #ref(change: number): void {
    // Closed: nothing to hold open any more (a holder's late release is ignored).
    if (!this.#open) return;
    const before = this.#holders;
    this.#holders += change;
    if (before === 0 && this.#holders > 0) this.#port.channel?.ref();
    else if (before > 0 && this.#holders === 0) this.#port.channel?.unref();
  }

  #answer(id: number, reply: PostReply): void {
    const waiting = this.#waiting.get(id);
    if (waiting === undefined) return;
    this.#waiting.delete(id);
    this.#ref(-1);
    waiting.resolve(reply);
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
    for (const fault of read.faults)
      this.#logger.error({ problem: fault.problem }, `a message from the --serve-api process is not one of the channel protocol (${fault.problem}); ignored`);
    for (const reply of read.batch) {
      switch (reply.k) {
        case 'jobs':
          this.#onJobs?.(reply.text);
          break;
        case 'stops':
          this.#onStops?.(reply.stops);
          break;
        case 'applied':
          for (const id of reply.ids) if (this.#waiting.get(id)?.kind === 'result') this.#answer(id, APPLIED);
          break;
        case 'answer':
          this.#answer(reply.id, { ok: true, answer: reply.answer });
          break;
        case 'error':
          this.#answer(reply.id, { ok: false, code: reply.code, message: reply.message, status: reply.status });
          break;
      }
    }
  };

  readonly #onDisconnect = (): void => {
    this.#open = false;
    const waiting = [...this.#waiting.values()];
    this.#waiting.clear();
    this.#holders = 0;
    this.#port.channel?.unref();
    for (const entry of waiting) entry.resolve(CLOSED);
  };
}
