/**
 * @module harness/store/postgres/notifications
 * Store events across harness processes: with `pg_notify` in the change's own statement
 * (statement-notices.ts: the submission, claim and result) or once it has committed
 * (notification-outbox.ts: the others), so never before the change is visible, and never
 * for a change rolled back; every store LISTENs on the channel and hands them
 * to its listeners. Events of this process are handed over at once after the commit and
 * their notification is skipped on arrival (the payload names its origin). A payload stays
 * under PostgreSQL's 8000-byte limit: events are sent in batches. When the listening
 * connection comes back after a loss, events may have been missed: every endpoint gets
 * a 'resync' event, so parked takers and job readers (/runsync, /status-sync, /stream)
 * read again. Stops missed meanwhile reach their worker through its next heartbeat
 * (the worker API stops a listed job that no longer runs with it).
 * Events go out only while another harness listens (peers.ts: control payloads, with a
 * `peer` field and no events, tell the stores of each other).
 */
import { randomUUID } from 'node:crypto';
import type postgres from 'postgres';
import * as z from 'zod';
import { JOB_STATUSES, type StoreEvent } from 'serverless-worker/internal';
import type { PeerMessage } from './peers.js';

export const CHANNEL = 'sw_job_store';
/** Bytes of one payload at most (PostgreSQL refuses 8000 and over). */
const MAX_PAYLOAD_BYTES = 7_900;
/**
 * Bytes of an event with an ended job's view at most: a larger one goes without the view
 * (a reader in another process reads the job instead), so that a large output never
 * crowds a payload.
 */
const MAX_EVENT_WITH_VIEW_BYTES = 2_000;

const StopReasonSchema = z.enum(['cancelled', 'timeout', 'expired']);
const JobViewSchema = z.object({
  id: z.string(),
  status: z.enum(JOB_STATUSES),
  output: z.unknown().optional(),
  error: z.unknown().optional(),
  delayTime: z.number().optional(),
  executionTime: z.number().optional(),
  retries: z.number().optional(),
});
const EventSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('queued'), endpointId: z.string(), takerWaitingFor: z.string().optional(), due: z.number().optional() }),
  z.object({
    type: z.literal('changed'),
    endpointId: z.string(),
    jobId: z.string(),
    status: z.enum(JOB_STATUSES).optional(),
    ended: JobViewSchema.optional(),
    due: z.number().optional(),
  }),
  z.object({ type: z.literal('stop'), endpointId: z.string(), workerId: z.string(), jobId: z.string(), reason: StopReasonSchema, attempt: z.number() }),
  z.object({ type: z.literal('worker'), endpointId: z.string(), workerId: z.string() }),
]);
const PayloadSchema = z.object({ origin: z.string(), events: z.array(EventSchema), peer: z.enum(['hello', 'here', 'beat', 'bye']).optional() });

/** A control notification between harness processes (peers.ts): no events. */
export function peerPayload(origin: string, message: PeerMessage): string {
  return JSON.stringify({ origin, events: [], peer: message });
}

/** The payloads for `events`, each under the size limit. */
export function encodePayloads(origin: string, events: readonly StoreEvent[]): string[] {
  const payloads: string[] = [];
  /** The events' JSON texts. */
  let batch: string[] = [];
  let size = 0;
  const flush = (): void => {
    if (batch.length > 0) payloads.push(`{"origin":${JSON.stringify(origin)},"events":[${batch.join(',')}]}`);
    batch = [];
    size = 0;
  };
  for (const event of events) {
    let text = JSON.stringify(event);
    let length = Buffer.byteLength(text);
    if (event.type === 'changed' && event.ended !== undefined && length > MAX_EVENT_WITH_VIEW_BYTES) {
      text = JSON.stringify({ ...event, ended: undefined });
      length = Buffer.byteLength(text);
    }
    if (size + length + 1 > MAX_PAYLOAD_BYTES - 64) flush();
    batch.push(text);
    size += length + 1;
  }
  flush();
  return payloads;
}

/** Listeners of one store, fed by this process's commits and by other processes' notifications. */
export class StoreEventHub {
  /** Names this process's notifications, so that it skips its own on arrival. */
  readonly origin = randomUUID();
  readonly #listeners = new Set<(event: StoreEvent) => void>();
  #listening: { unlisten(): Promise<void> } | undefined;
  #connects = 0;
  #peers: { heard(origin: string, message: PeerMessage | undefined): void } | undefined;

  /** Wake every waiter of every endpoint: each reads again (events may have been missed). */
  resync(endpoints: () => Promise<string[]>, onError: (error: unknown) => void): void {
    endpoints().then((ids) => this.emit(ids.map((endpointId) => ({ type: 'resync', endpointId }))), onError);
  }

  subscribe(listener: (event: StoreEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Hand `events` to every listener; a listener's failure is its own. */
  emit(events: readonly StoreEvent[]): void {
    for (const event of events) {
      for (const listener of [...this.#listeners]) {
        try {
          listener(event);
        } catch {
          // The store's change stands whatever a listener does.
        }
      }
    }
  }

  /**
   * LISTEN on a connection of `sql` (the driver reconnects and listens again after a
   * loss); `endpoints` names every endpoint for the wake-up after a reconnect.
   */
  async listen(
    sql: postgres.Sql,
    endpoints: () => Promise<string[]>,
    onError: (error: unknown) => void,
    peers: { listening(): void; heard(origin: string, message: PeerMessage | undefined): void },
    reconnected: () => void = () => undefined,
  ): Promise<void> {
    this.#peers = peers;
    this.#listening = await sql.listen(
      CHANNEL,
      (payload) => this.#receive(payload, onError),
      () => {
        peers.listening();
        if (this.#connects++ === 0) return;
        reconnected();
        endpoints().then((ids) => this.emit(ids.map((endpointId) => ({ type: 'resync', endpointId }))), onError);
      },
    );
  }

  async close(): Promise<void> {
    this.#listeners.clear();
    await this.#listening?.unlisten().catch(() => undefined);
    this.#listening = undefined;
  }

  #receive(payload: string, onError: (error: unknown) => void): void {
    // This process's own notifications (most of them with one harness) are skipped before
    // they are parsed: a payload names its origin first (a random UUID), in both the
    // encodings it is sent in (encodePayloads, and the SQL of statement-notices.ts's notifySql).
    if (payload.slice(0, 64).includes(this.origin)) return;
    let parsed: z.infer<typeof PayloadSchema>;
    try {
      parsed = PayloadSchema.parse(JSON.parse(payload));
    } catch (error) {
      onError(new Error(`A job store notification on ${CHANNEL} is not one this harness sends: ${String(error)}`));
      return;
    }
    if (parsed.origin === this.origin) return;
    this.#peers?.heard(parsed.origin, parsed.peer);
    this.emit(parsed.events);
  }
}
