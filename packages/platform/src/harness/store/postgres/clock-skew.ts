/**
 * @module harness/store/postgres/clock-skew
 * Whose clock (issue 33, item 5). The store keeps deadlines (ttl, execution timeouts,
 * retention, worker liveness) as each harness's own epoch milliseconds, and every
 * harness on the database applies them: one whose clock runs 30 s ahead would expire the
 * others' jobs 30 s early. So a harness measures its clock against PostgreSQL's
 * (`clock_timestamp()`, halfway through one round trip) when its store opens and each
 * time its LISTEN connection comes back, and refuses to run above a bound: every
 * harness within the bound of the database is within twice the bound of every other.
 */
import type postgres from 'postgres';
import { ServerlessWorkerError } from 'serverless-worker/internal';

/** The default bound on |this clock - PostgreSQL's clock|, ms. */
export const MAX_CLOCK_SKEW_MS = 2_000;

export interface ClockSkew {
  /** This clock minus the database's, ms (positive: this one runs ahead). */
  readonly skewMs: number;
  /** The round trip the reading took, ms: the measure is good to half of it. */
  readonly roundTripMs: number;
}

export async function measureClockSkew(sql: postgres.Sql, now: () => number): Promise<ClockSkew> {
  const before = now();
  const rows = await sql<{ now: number }[]>`SELECT (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now`;
  const after = now();
  return { skewMs: (before + after) / 2 - Number(rows[0]?.now), roundTripMs: after - before };
}

/** The error when `skew` is beyond `maxSkewMs` (the round trip's uncertainty given to it), else undefined. */
export function skewRefusal(skew: ClockSkew, maxSkewMs: number): ServerlessWorkerError | undefined {
  if (Math.abs(skew.skewMs) - skew.roundTripMs / 2 <= maxSkewMs) return undefined;
  const seconds = (ms: number): string => `${(ms / 1_000).toFixed(1)} s`;
  return new ServerlessWorkerError(
    'SW_CLOCK_SKEW',
    `This machine's clock is ${seconds(Math.abs(skew.skewMs))} ${skew.skewMs > 0 ? 'ahead of' : 'behind'} PostgreSQL's (at most ${seconds(maxSkewMs)} allowed: job deadlines are shared through the database); sync this machine's clock (NTP) before using this store.`,
    { skewMs: Math.round(skew.skewMs), maxSkewMs },
  );
}
