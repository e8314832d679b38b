/**
 * Worker slots: this process's own (LocalSlotClaims) and shared in PostgreSQL
 * (PostgresSlotClaims, two instances on one database as two machines): concurrent
 * claims get distinct slots and never more than `max`, release frees a slot, renew keeps
 * a lease alive past its first expiry, a lapsed slot goes to the next claimer, the slots
 * of a machine whose PostgreSQL session ended (its process died) go to the next claimer
 * within their lease, and worker ids carry the machine when slots are shared.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { LocalSlotClaims, launchedWorkerId, machineTag } from '../../../packages/platform/src/harness/launcher/index.js';
import { PostgresSlotClaims } from '../../../packages/platform/src/harness/launcher/postgres-slot-claims.js';
import { createTestDatabase, type TestDatabase } from '../../postgres/test-database.js';
import { waitFor } from '../../kit/index.js';

const T0 = 1_700_000_000_000;

describe('LocalSlotClaims', () => {
  it('hands out the lowest free slot below max, none past it, and takes slots back', async () => {
    const slots = new LocalSlotClaims('m1');
    expect(slots.shared).toBe(false);
    expect(await slots.claim('ep', 2, 'w1', T0)).toBe(0);
    expect(await slots.claim('ep', 2, 'w2', T0)).toBe(1);
    expect(await slots.claim('ep', 2, 'w3', T0)).toBeUndefined();
    await slots.release('ep', 'w1');
    expect(await slots.claim('ep', 2, 'w3', T0)).toBe(0);
    expect(await slots.heldElsewhere()).toEqual([]);
    expect(launchedWorkerId(slots, 'ep', 7)).toBe('ep-7');
  });
});

describe('PostgresSlotClaims', () => {
  let database: TestDatabase | undefined;
  const opened: PostgresSlotClaims[] = [];
  afterEach(async () => {
    for (const slots of opened.splice(0)) await slots.close();
    await database?.drop();
    database = undefined;
  });
  const machine = async (machineId: string): Promise<PostgresSlotClaims> => {
    database ??= await createTestDatabase();
    const slots = new PostgresSlotClaims(await database.connect(2), { machineId, leaseMs: 1_000 });
    opened.push(slots);
    return slots;
  };

  it('two machines claiming at once get distinct slots, max in all; release frees one', async () => {
    const a = await machine('host-a-1');
    const b = await machine('host-b-2');
    const claims = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? a : b).claim('ep', 3, `ep-${i % 2 === 0 ? 'a' : 'b'}-${i}`, T0)));
    const won = claims.filter((slot) => slot !== undefined);
    expect(won.sort()).toEqual([0, 1, 2]);
    const heldByB = await a.heldElsewhere('ep', T0);
    const heldByA = await b.heldElsewhere('ep', T0);
    expect(heldByA.length + heldByB.length).toBe(3);
    const [first] = heldByA.length > 0 ? [heldByA[0] as string] : [heldByB[0] as string];
    const owner = heldByA.includes(first) ? a : b;
    await owner.release('ep', first);
    expect(await (owner === a ? b : a).claim('ep', 3, 'ep-late', T0)).toBeDefined();
    expect(await a.claim('ep', 3, 'ep-none', T0)).toBeUndefined();
  });

  it('renew keeps a slot past its first lease; a slot not renewed lapses to the next machine', async () => {
    const a = await machine('host-a-1');
    const b = await machine('host-b-2');
    expect(await a.claim('ep', 1, 'ep-a-1', T0)).toBe(0);
    await a.renew(T0 + 900);
    // Past the first lease (T0 + 1000), still held: renewed until T0 + 1900.
    expect(await b.claim('ep', 1, 'ep-b-1', T0 + 1_500)).toBeUndefined();
    expect(await b.heldElsewhere('ep', T0 + 1_500)).toEqual(['ep-a-1']);
    // Not renewed again: lapsed at T0 + 1900, machine b takes it.
    expect(await b.claim('ep', 1, 'ep-b-1', T0 + 2_000)).toBe(0);
    expect(await a.heldElsewhere('ep', T0 + 2_000)).toEqual(['ep-b-1']);
    // a's late renewal does not take it back (the slot is b's now).
    await a.renew(T0 + 2_100);
    expect(await a.heldElsewhere('ep', T0 + 2_200)).toEqual(['ep-b-1']);
    expect(launchedWorkerId(a, 'ep', 3)).toBe(`ep-${machineTag('host-a-1')}-3`);
    expect(machineTag('Build Box.local-42')).toBe('build-box-local-42');
  });

  it('a machine whose session ended (its process died) frees its slots at once, within their lease; a live one keeps its own', async () => {
    database ??= await createTestDatabase();
    // Its own handle, closed below: PostgreSQL ends its sessions as when the process is SIGKILLed (the kernel closes the sockets).
    const goneHandle = await database.connect(2);
    const gone = new PostgresSlotClaims(goneHandle, { machineId: 'host-gone-1', leaseMs: 600_000 });
    const live = await machine('host-live-2');
    const next = await machine('host-next-3');
    expect([await gone.claim('ep', 3, 'ep-gone-0', T0), await gone.claim('ep', 3, 'ep-gone-1', T0), await gone.claim('ep', 3, 'ep-gone-2', T0)]).toEqual([
      0, 1, 2,
    ]);
    expect(await live.claim('ep-live', 1, 'ep-live-0', T0)).toBe(0);
    // Held while their holder runs.
    expect(await next.claim('ep', 3, 'ep-next-0', T0 + 1)).toBeUndefined();
    expect(await next.heldElsewhere('ep', T0 + 1)).toEqual(['ep-gone-0', 'ep-gone-1', 'ep-gone-2']);
    // Slot 2 names a session that began before the server did (a live harness's across a PostgreSQL restart, before its next renew): its lease decides.
    const admin = await database.connect(1);
    await admin.sql`UPDATE sw_launcher_slots SET holder_started = pg_postmaster_start_time() - interval '1 second' WHERE worker_id = 'ep-gone-2'`;
    await goneHandle.close();
    // The server ends the sessions just after the sockets close.
    await waitFor(async () => (await next.heldElsewhere('ep', T0 + 1)).length === 1, "the gone machine's slots 0 and 1 freed", 20_000, 20);
    expect(await next.heldElsewhere('ep', T0 + 1)).toEqual(['ep-gone-2']);
    // Taken at T0 + 1, 10 minutes before their leases end.
    expect([
      await next.claim('ep', 3, 'ep-next-0', T0 + 1),
      await next.claim('ep', 3, 'ep-next-1', T0 + 1),
      await next.claim('ep', 3, 'ep-next-2', T0 + 1),
    ]).toEqual([0, 1, undefined]);
    // A live machine's slot is never taken, lease running; after it, as always.
    expect(await next.claim('ep-live', 1, 'ep-next-live', T0 + 1)).toBeUndefined();
    expect(await next.claim('ep-live', 1, 'ep-next-live', T0 + 1_001)).toBe(0);
    expect(await next.heldElsewhere('ep', T0 + 599_999)).toEqual(['ep-gone-2']);
    expect(await next.heldElsewhere('ep', T0 + 600_001)).toEqual([]);
  });
});
