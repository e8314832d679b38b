/**
 * A harness loads of prom-client only the classes it counts with (metrics/create-metrics.ts):
 * its default metrics, and the @opentelemetry/api they require (103 module files), load at the
 * first /metrics read, which then shows them. A preload records every package the child
 * requires (test/fixtures/log-required-packages.mjs).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ChildList, REPO_ROOT } from '../child-process.js';
import { call, startHarnessProcess } from '../kit/index.js';

const children = new ChildList();
const scratch = mkdtempSync(join(tmpdir(), 'sw-lazy-metrics-'));
afterEach(() => children.killAll());
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const required = (file: string): string[] => readFileSync(file, 'utf8').split('\n').filter(Boolean);

describe('serverless-worker harness: prom-client', () => {
  it('starts without the default metrics and @opentelemetry/api, and loads them at the first /metrics read', { timeout: 60_000 }, async () => {
    const file = join(scratch, 'required.txt');
    const preload = join(REPO_ROOT, 'test/fixtures/log-required-packages.mjs');
    const { url } = await startHarnessProcess(children, [], { env: { NODE_OPTIONS: `--import ${pathToFileURL(preload).href}`, SW_TEST_REQUIRED_FILE: file } });
    // The preload works: the classes came from prom-client.
    expect(required(file)).toContain('prom-client');
    expect(required(file)).not.toContain('@opentelemetry/api');
    const metrics = await call('GET', `${url}/metrics`);
    expect(metrics.status).toBe(200);
    expect(metrics.text).toContain('serverless_worker_jobs_total');
    expect(metrics.text).toContain('process_cpu_seconds_total');
    expect(required(file)).toContain('@opentelemetry/api');
  });
});
