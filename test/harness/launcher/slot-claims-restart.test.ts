/**
 * The launcher's shared worker slots across a PostgreSQL restart (a private embedded
 * server, stopped and started on the same port and data). A restart ends every session, a
 * live harness's presence session too, so an ended session proves nothing then: a live
 * machine's slot keeps its lease until its next renew names its new session; from then on
 * the end of that session (the machine gone) frees the slot at once again.
 */
import { afterEach, expect, it } from 'vitest';
import { PostgresSlotClaims } from '../../../packages/platform/src/harness/launcher/postgres-slot-claims.js';
import { openHarnessDatabase } from '../../../packages/platform/src/harness/harness-database.js';
import type { PostgresDatabase } from '../../../packages/platform/src/harness/postgres/database.js';
import { startEmbeddedServer, type EmbeddedServer } from '../../postgres/embedded-server.js';
import { waitFor } from '../../kit/index.js';

const T0 = 1_700_000_000_000;
let server: EmbeddedServer | undefined;
const handles: PostgresDatabase[] = [];

afterEach(async () => {
  for (const handle of handles.splice(0)) await handle.close();
  await server?.stop();
  server = undefined;
});

it('a restart ends every session: a live machine keeps its slot for its lease until its renew names its new session', async () => {
  server = await startEmbeddedServer();
  const open = async (): Promise<PostgresDatabase> => {
    const handle = await openHarnessDatabase((server as EmbeddedServer).url, { poolSize: 2 });
    handles.push(handle);
    return handle;
  };
  const [holderDb, otherDb] = [await open(), await open()];
  const holder = new PostgresSlotClaims(holderDb, { machineId: 'host-holder', leaseMs: 600_000 });
  const other = new PostgresSlotClaims(otherDb, { machineId: 'host-other', leaseMs: 600_000 });
  expect(await holder.claim('ep', 1, 'ep-holder-0', T0)).toBe(0);

  await server.pause();
  await server.resume();
  // The pools reconnect on their next statements (the first may fail on a connection the restart closed).
  const heldByOthers = async (now: number): Promise<string[] | undefined> => other.heldElsewhere('ep', now).catch(() => undefined);
  const afterRestart = await waitFor(() => heldByOthers(T0 + 1), 'the other machine back on the restarted server', 60_000, 100);
  // Every session ended with the restart, the holder's too: its slot is still held, by its lease.
  expect(afterRestart).toEqual(['ep-holder-0']);
  expect(await other.claim('ep', 1, 'ep-other-0', T0 + 1)).toBeUndefined();

  // The holder renews (each launcher tick): the row names its session on the restarted server.
  const namesNewSession = async (): Promise<boolean> => {
    await holder.renew(T0 + 2).catch(() => undefined);
    const rows = await otherDb.sql<
      { current: boolean }[]
    >`SELECT holder_started > pg_postmaster_start_time() AS current FROM sw_launcher_slots WHERE worker_id = 'ep-holder-0'`;
    return rows[0]?.current === true;
  };
  await waitFor(namesNewSession, "the holder's slot naming its session after the restart", 60_000, 100);
  expect(await other.claim('ep', 1, 'ep-other-0', T0 + 3)).toBeUndefined();

  // The holder gone (its handle closed: the server ends its sessions): the slot is free within its lease.
  await holderDb.close();
  await waitFor(async () => (await other.heldElsewhere('ep', T0 + 3)).length === 0, "the gone holder's slot freed", 20_000, 20);
  expect(await other.claim('ep', 1, 'ep-other-0', T0 + 3)).toBe(0);
}, 180_000);
