/**
 * @module harness/http/job-metrics
 * Counts the harness's jobs into the metrics registry as they end: by final status,
 * with their run time. The in-progress gauge is left to the worker side, which sees
 * jobs start.
 */
import type { Harness, Metrics } from 'serverless-worker/internal';

/** Record every job of `harness` that ends from now on; returns the unsubscribe. */
export function bindJobMetrics(harness: Harness, metrics: Metrics): () => void {
  const disposers: Array<() => void> = [];
  const stopWatchingEndpoints = harness.onEndpoint((endpoint) => {
    disposers.push(
      endpoint.jobEnded.add((job) => {
        metrics.jobsTotal.inc({ status: job.status });
        if (job.startedAt !== undefined && job.endedAt !== undefined) {
          metrics.jobDurationSeconds.observe({ status: job.status }, Math.max(0, job.endedAt - job.startedAt) / 1000);
        }
      }),
    );
  });
  return () => {
    stopWatchingEndpoints();
    for (const dispose of disposers.splice(0)) dispose();
  };
}
