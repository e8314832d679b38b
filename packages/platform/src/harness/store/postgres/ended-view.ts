/**
 * @module harness/store/postgres/ended-view
 * A change's events with the ended job's view on its 'changed' event, so that a /runsync
 * waiter (here or in another harness) answers without reading the job. Used by the result's
 * completion (completion.ts) and by a silent result statement whose events are held for a
 * later notifying one (result-writes.ts, statement-notices.ts).
 */
import { type StoredJob, type StoreEvent, toJobView } from 'serverless-worker/internal';

/** The change's events, its 'changed' event with the ended job's view. */
export function withView(events: readonly StoreEvent[], ended: StoredJob): StoreEvent[] {
  const view = toJobView(ended);
  return events.map((event) => (event.type === 'changed' && event.jobId === ended.id ? { ...event, ended: view } : event));
}
