/**
 * @module harness/http/body-read-gate-metrics
 * The body read gate's counts on /metrics (body-read-gate.ts): bodies read now, bodies
 * waiting for a slot, and slots given up because their socket stalled. Set as the gate
 * changes rather than read at scrape time, so that a scrape costs nothing extra.
 */
import type { Metrics } from 'serverless-worker/internal';
import type { BodyReadGateObserver } from './body-read-gate.js';

/** An observer that keeps the gate's gauges and stall counter of `metrics` up to date. */
export function bodyReadGateMetrics(metrics: Metrics): BodyReadGateObserver {
  metrics.harnessBodyReadsActive.set(0);
  metrics.harnessBodyReadsWaiting.set(0);
  return {
    state: ({ reading, waiting }) => {
      metrics.harnessBodyReadsActive.set(reading);
      metrics.harnessBodyReadsWaiting.set(waiting);
    },
    stalled: () => metrics.harnessBodyReadStallsTotal.inc(),
  };
}
