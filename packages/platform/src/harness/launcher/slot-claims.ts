/**
 * @module harness/launcher/slot-claims
 * Worker slots: before it starts a worker, a launcher claims one of the endpoint's
 * `workersMax` slots (numbers 0 to workersMax - 1); the worker holds it until it exits.
 * On one machine (LocalSlotClaims, the default) that is bookkeeping of this process.
 * With several harnesses on one PostgreSQL database (PostgresSlotClaims) the slots live
 * in the database: a claim is one statement that takes a free or lapsed slot, so two
 * machines never start the same slot and the endpoint never has more than workersMax
 * live slots across all machines; each machine renews its leases every tick, and a
 * crashed machine's slots lapse after the lease and go to whichever machine claims next.
 */
import { hostname } from 'node:os';

export interface SlotClaims {
  /** This machine's id, as recorded on its slots (printed at start). */
  readonly machineId: string;
  /** Whether other machines share the slots (then worker ids carry the machine). */
  readonly shared: boolean;
  /**
   * Claim the lowest slot of `endpointId` below `max` that no live lease holds, for
   * `workerId`; answers its number, or undefined when all `max` are held.
   */
  claim(endpointId: string, max: number, workerId: string, now: number): Promise<number | undefined>;
  /** Worker ids of the endpoint's live slots held by other machines. */
  heldElsewhere(endpointId: string, now: number): Promise<string[]>;
  /** Extend the leases of every slot this machine holds (each launcher tick). */
  renew(now: number): Promise<void>;
  /** Give the slot of `workerId` back (its worker exited). */
  release(endpointId: string, workerId: string): Promise<void>;
  close(): Promise<void>;
}

/** `<hostname>-<pid>`: unique per harness process, readable in logs. */
export function defaultMachineId(): string {
  return `${hostname()}-${process.pid}`;
}

/** The machine id as it goes into worker ids: lowercase letters, digits and `-`, at most 40. */
export function machineTag(machineId: string): string {
  const tag = machineId
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40);
  return tag.length > 0 ? tag : 'machine';
}

/** The slots of one process: no lease (nothing else can take them), none held elsewhere. */
export class LocalSlotClaims implements SlotClaims {
  readonly machineId: string;
  readonly shared = false;
  /** endpoint id -> slot -> worker id */
  readonly #held = new Map<string, Map<number, string>>();

  constructor(machineId: string = defaultMachineId()) {
    this.machineId = machineId;
  }

  async claim(endpointId: string, max: number, workerId: string, _now?: number): Promise<number | undefined> {
    let slots = this.#held.get(endpointId);
    if (!slots) {
      slots = new Map();
      this.#held.set(endpointId, slots);
    }
    for (let slot = 0; slot < max; slot++) {
      if (slots.has(slot)) continue;
      slots.set(slot, workerId);
      return slot;
    }
    return undefined;
  }

  async heldElsewhere(): Promise<string[]> {
    return [];
  }

  async renew(): Promise<void> {}

  async release(endpointId: string, workerId: string): Promise<void> {
    const slots = this.#held.get(endpointId);
    if (!slots) return;
    for (const [slot, holder] of slots) if (holder === workerId) slots.delete(slot);
    if (slots.size === 0) this.#held.delete(endpointId);
  }

  async close(): Promise<void> {
    this.#held.clear();
  }
}
