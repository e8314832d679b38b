/**
 * @module harness/launcher/postgres-slot-claims
 * Worker slots in PostgreSQL (`sw_launcher_slots`), shared by every harness on the
 * database. A claim is one statement: the lowest slot number below `max` that has no row
 * or only a lapsed one is inserted, or taken over (`ON CONFLICT … DO UPDATE … WHERE` the
 * lease has passed), for this machine; two machines claiming at once cannot both get
 * it (the primary key decides, the loser's WHERE sees the winner's fresh lease) and the
 * loser tries the next free number. Leases are renewed every launcher tick; a slot whose
 * machine stopped renewing (crashed, cut off) lapses after `leaseMs` and is claimed by the
 * next machine that needs it. A slot whose holder provably no longer runs (its presence
 * session ended: slot-holder.ts) is free at once: a harness SIGKILLed with every slot of
 * an endpoint does not hold up the next one for the lease. Times are the harness clock's
 * epoch ms, so the machines' clocks must agree to well within the lease (NTP). The claims
 * run on the process's one database handle (harness/postgres/database.ts) and its
 * session, which its opener closes.
 */
import type postgres from 'postgres';
import * as z from 'zod';
import type { PostgresDatabase } from '../postgres/database.js';
import type { SlotClaims } from './slot-claims.js';
import { currentHolderSession, slotHeld, type HolderSession } from './slot-holder.js';

export interface PostgresSlotClaimsOptions {
  /** This machine's id (recorded on its slots). */
  readonly machineId: string;
  /** How long a slot stays held without renewal, ms; default 15 000. */
  readonly leaseMs?: number;
}

/** Claims that lost a race go for the next free slot this many times in one call. */
const CLAIM_TRIES = 3;

const SlotRow = z.object({ slot: z.number().int() });
const WorkerRow = z.object({ worker_id: z.string() });

export class PostgresSlotClaims implements SlotClaims {
  readonly machineId: string;
  readonly shared = true;
  readonly leaseMs: number;
  readonly #sql: postgres.Sql;
  /** The presence session's connection (the handle's session()). */
  readonly #session: postgres.Sql;
  /** The slots this machine holds: `endpointId` -> worker ids (renewed each tick). */
  readonly #held = new Map<string, Set<string>>();
  #closed = false;

  /** The claims on `database` (opened and migrated by the caller, who closes it). */
  constructor(database: PostgresDatabase, options: PostgresSlotClaimsOptions) {
    this.#sql = database.sql;
    this.#session = database.session();
    this.machineId = options.machineId;
    this.leaseMs = options.leaseMs ?? 15_000;
  }

  async claim(endpointId: string, max: number, workerId: string, now: number): Promise<number | undefined> {
    if (this.#closed || max <= 0) return undefined;
    const expires = now + this.leaseMs;
    const holder = await currentHolderSession(this.#session);
    for (let attempt = 0; attempt < CLAIM_TRIES; attempt++) {
      const sql = this.#sql;
      const rows = await sql`
        WITH free AS (
          SELECT n AS slot FROM generate_series(0, ${max - 1}::integer) AS n
          WHERE NOT EXISTS (
            SELECT 1 FROM sw_launcher_slots s WHERE s.endpoint_id = ${endpointId} AND s.slot = n AND ${slotHeld(sql, 's', now)}
          )
          ORDER BY n LIMIT 1
        )
        INSERT INTO sw_launcher_slots (endpoint_id, slot, machine_id, worker_id, lease_expires_at, holder_pid, holder_started)
        SELECT ${endpointId}, slot, ${this.machineId}, ${workerId}, ${expires}, ${holder?.pid ?? null}::integer, ${holder?.started ?? null}::timestamptz FROM free
        ON CONFLICT (endpoint_id, slot) DO UPDATE
          SET machine_id = EXCLUDED.machine_id, worker_id = EXCLUDED.worker_id, lease_expires_at = EXCLUDED.lease_expires_at,
            holder_pid = EXCLUDED.holder_pid, holder_started = EXCLUDED.holder_started
          WHERE NOT ${slotHeld(sql, 'sw_launcher_slots', now)}
        RETURNING slot`;
      const row = rows[0];
      if (row) {
        this.#holdersOf(endpointId).add(workerId);
        return SlotRow.parse(row).slot;
      }
      // Nothing free, or another machine took the free one between our read and write.
      const live = await sql`SELECT count(*)::integer AS slot FROM sw_launcher_slots s
        WHERE endpoint_id = ${endpointId} AND slot < ${max} AND ${slotHeld(sql, 's', now)}`;
      if (SlotRow.parse(live[0]).slot >= max) return undefined;
    }
    return undefined;
  }

  async heldElsewhere(endpointId: string, now: number): Promise<string[]> {
    if (this.#closed) return [];
    const rows = await this.#sql`SELECT worker_id FROM sw_launcher_slots s
      WHERE endpoint_id = ${endpointId} AND machine_id <> ${this.machineId} AND ${slotHeld(this.#sql, 's', now)} ORDER BY slot`;
    return rows.map((row) => WorkerRow.parse(row).worker_id);
  }

  async renew(now: number): Promise<void> {
    if (this.#closed) return;
    const workerIds = [...this.#held.values()].flatMap((ids) => [...ids]);
    if (workerIds.length > 0) {
      // The session too: after a lost connection (a PostgreSQL restart) the rows name the new one.
      const holder: HolderSession | undefined = await currentHolderSession(this.#session);
      await this.#sql`UPDATE sw_launcher_slots SET lease_expires_at = ${now + this.leaseMs},
          holder_pid = ${holder?.pid ?? null}::integer, holder_started = ${holder?.started ?? null}::timestamptz
        WHERE machine_id = ${this.machineId} AND worker_id = ANY(${workerIds}::text[])`;
    }
    // Rows lapsed for a whole lease are nobody's: clear them (a claim would overwrite them anyway).
    await this.#sql`DELETE FROM sw_launcher_slots WHERE lease_expires_at < ${now - this.leaseMs}`;
  }

  async release(endpointId: string, workerId: string): Promise<void> {
    const holders = this.#held.get(endpointId);
    holders?.delete(workerId);
    if (holders?.size === 0) this.#held.delete(endpointId);
    if (this.#closed) return;
    await this.#sql`DELETE FROM sw_launcher_slots WHERE endpoint_id = ${endpointId} AND machine_id = ${this.machineId} AND worker_id = ${workerId}`;
  }

  /** Stop claiming (the connections are the database handle's); slots still held lapse after their lease, or once the handle's session ends. */
  async close(): Promise<void> {
    this.#closed = true;
  }

  #holdersOf(endpointId: string): Set<string> {
    let holders = this.#held.get(endpointId);
    if (!holders) {
      holders = new Set();
      this.#held.set(endpointId, holders);
    }
    return holders;
  }
}
