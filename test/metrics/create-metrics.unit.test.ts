import { register as globalRegistry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { createMetrics } from '../../src/metrics/create-metrics.js';
import { METRICS } from '../../src/metrics/names.js';
import { recordJobFinished, recordJobStarted } from '../../src/metrics/record-job.js';

describe('metric names', () => {
  const defs = Object.values(METRICS);

  it('follow Prometheus conventions', () => {
    for (const def of defs) {
      expect(def.name, def.name).toMatch(/^serverless_worker_[a-z_]+$/);
      if (def.type === 'counter') expect(def.name, def.name).toMatch(/_total$/);
      else expect(def.name, def.name).not.toMatch(/_total$/);
      if (def.type === 'histogram') expect(def.name, def.name).toMatch(/_seconds$/);
      expect(def.help.length, def.name).toBeGreaterThan(10);
    }
    expect(new Set(defs.map((d) => d.name)).size).toBe(defs.length);
  });

  it('label every GPU gauge with index, uuid and name', () => {
    const gpu = defs.filter((d) => d.name.startsWith('serverless_worker_gpu_') && d.labels.length > 0 && d.type === 'gauge');
    expect(gpu.map((d) => d.name).sort()).toEqual([
      'serverless_worker_gpu_memory_activity_ratio',
      'serverless_worker_gpu_memory_total_bytes',
      'serverless_worker_gpu_memory_used_bytes',
      'serverless_worker_gpu_power_limit_watts',
      'serverless_worker_gpu_power_watts',
      'serverless_worker_gpu_temperature_celsius',
      'serverless_worker_gpu_utilization_ratio',
    ]);
    for (const d of gpu) expect(d.labels).toEqual(['index', 'uuid', 'name']);
  });
});

describe('createMetrics', () => {
  it('registers every metric in its own registry, never the global one', async () => {
    const metrics = createMetrics();
    const names = (await metrics.registry.getMetricsAsJSON()).map((m) => m.name);
    for (const def of Object.values(METRICS)) expect(names).toContain(def.name);
    expect(globalRegistry.getSingleMetric(METRICS.jobsTotal.name)).toBeUndefined();
  });

  it("collects Node's process metrics from the first text() on with defaultMetrics 'from-first-read' (no event-loop monitor before)", async () => {
    const metrics = createMetrics({ defaultMetrics: 'from-first-read' });
    const before = (await metrics.registry.getMetricsAsJSON()).map((m) => m.name);
    expect(before).not.toContain('process_cpu_user_seconds_total');
    expect(before).not.toContain('nodejs_eventloop_lag_p99_seconds');
    const text = await metrics.text();
    expect(text).toContain('process_cpu_user_seconds_total');
    expect(text).toContain('nodejs_eventloop_lag_p99_seconds');
    expect(text).toContain(METRICS.jobsTotal.name);
    // A second read registers nothing twice (prom-client throws on a duplicate name).
    await expect(metrics.text()).resolves.toContain('process_cpu_user_seconds_total');
  });

  it('lets several instances live in one process, each counting its own', async () => {
    const a = createMetrics();
    const b = createMetrics();
    a.heartbeatFailuresTotal.inc();
    a.heartbeatFailuresTotal.inc();
    expect(await a.text()).toContain('serverless_worker_heartbeat_failures_total 2');
    expect(await b.text()).toContain('serverless_worker_heartbeat_failures_total 0');
  });

  it('records a job in base units: seconds, by final status', async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    recordJobStarted(metrics, { queueDelayMs: 1500 });
    recordJobStarted(metrics);
    expect(await metrics.text()).toContain('serverless_worker_jobs_in_progress 2');
    recordJobFinished(metrics, { status: 'COMPLETED', durationMs: 2500 });
    recordJobFinished(metrics, { status: 'TIMED_OUT', durationMs: 30_000 });
    const text = await metrics.text();
    expect(text).toContain('serverless_worker_jobs_in_progress 0');
    expect(text).toContain('serverless_worker_jobs_total{status="COMPLETED"} 1');
    expect(text).toContain('serverless_worker_jobs_total{status="TIMED_OUT"} 1');
    expect(text).toContain('serverless_worker_job_duration_seconds_sum{status="COMPLETED"} 2.5');
    expect(text).toContain('serverless_worker_job_duration_seconds_bucket{le="5",status="COMPLETED"} 1');
    expect(text).toContain('serverless_worker_job_queue_delay_seconds_sum 1.5');
    expect(text).toContain('serverless_worker_job_queue_delay_seconds_count 1');
  });

  it('exposes the other counters by typed property', async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    metrics.streamChunksTotal.inc(3);
    metrics.streamBytesTotal.inc(4096);
    metrics.resultPostRetriesTotal.inc();
    metrics.resultPostGiveUpsTotal.inc();
    metrics.webhookDeliveriesTotal.inc({ outcome: 'success' });
    metrics.webhookDeliveriesTotal.inc({ outcome: 'failure' }, 2);
    metrics.webhookGiveUpsTotal.inc();
    const text = await metrics.text();
    for (const line of [
      'serverless_worker_stream_chunks_total 3',
      'serverless_worker_stream_bytes_total 4096',
      'serverless_worker_result_post_retries_total 1',
      'serverless_worker_result_post_give_ups_total 1',
      'serverless_worker_webhook_deliveries_total{outcome="success"} 1',
      'serverless_worker_webhook_deliveries_total{outcome="failure"} 2',
      'serverless_worker_webhook_give_ups_total 1',
    ]) {
      expect(text).toContain(line);
    }
    expect(metrics.contentType).toMatch(/^text\/plain/);
  });

  it('collects the default process metrics unless told not to, and adds default labels', async () => {
    const withDefaults = await createMetrics({ defaultLabels: { worker_id: 'w1' } }).text();
    expect(withDefaults).toMatch(/^process_cpu_user_seconds_total\{worker_id="w1"\} /m);
    expect(withDefaults).toContain('nodejs_eventloop_lag_seconds');
    expect(withDefaults).toContain('serverless_worker_jobs_in_progress{worker_id="w1"} 0');
    expect(await createMetrics({ defaultMetrics: false }).text()).not.toContain('process_cpu_user_seconds_total');
  });
});
