/**
 * @module bench/dashboard
 * What an open dashboard page costs the harness's throughput. The end-to-end setup
 * (harness, HTTP server and an in-process worker in a process of their own, rate
 * limits off, the dashboard on as by default) under 64 closed-loop `/runsync` clients;
 * each run measures a window with no page open, then a window with one page open, so
 * the two figures of a run share the machine's load. The page is what a browser on
 * the jobs view does: the `/ui/api/events` stream (one tick a second: endpoint
 * counts, workers, the chart point) and a refetch of the first page of jobs at each
 * tick. With no page the dashboard holds no timer and no listener.
 *
 * Its one standing cost is the attempt log (ui/attempt-log.ts), fed whether a page is
 * open or not: the second case times its CPU per job in this process: a job completed
 * on its first attempt (taken over the worker API, or in process: no record kept), and
 * a failed one (kept, the log at its cap of 10 000 jobs).
 *
 * The third times the jobs route at 100 000 retained jobs (moved here from
 * test/harness/http/ui-routes.unit.test.ts, which checks the same paging on a few hundred):
 * a harness and its server in this process, 100 000 jobs submitted (10 cancelled), then
 * each kind of query over HTTP, and the overview (one live tick's work).
 */
import { Pool } from 'undici';
import { ForkedChild } from './lib/child.js';
import { childScript } from './lib/compiled.js';
import { QueueClient, preciseNow, type JobView } from './lib/http-client.js';
import { readProc } from './lib/proc.js';
import type { BenchCase, Benchmark } from './lib/runner.js';
import { AttemptLog, type JobAttemptFacts } from '../packages/platform/src/harness/dashboard/attempt-log.js';
import { Harness } from '../src/harness/index.js';
import { createMetrics } from '../src/metrics/index.js';
import { createHarnessServer, type HarnessServer } from '../packages/platform/src/harness/server-api.js';

const ENDPOINT = 'e2e';
const CLIENTS = 64;

/** One dashboard page: the event stream, and the jobs page fetched again at each tick. */
class PageSimulator {
  readonly #pool: Pool;
  readonly #abort = new AbortController();
  ticks = 0;
  #done: Promise<void>;

  constructor(url: string) {
    this.#pool = new Pool(url, { connections: 2 });
    this.#done = this.#run();
  }

  async #run(): Promise<void> {
    try {
      const response = await this.#pool.request({ method: 'GET', path: '/ui/api/events', signal: this.#abort.signal });
      let buffer = '';
      for await (const part of response.body) {
        buffer += (part as Buffer).toString('utf8');
        let at: number;
        while ((at = buffer.indexOf('\n\n')) >= 0) {
          const frame = buffer.slice(0, at);
          buffer = buffer.slice(at + 2);
          if (frame.startsWith('event: tick')) {
            this.ticks++;
            const page = await this.#pool.request({ method: 'GET', path: `/ui/api/endpoints/${ENDPOINT}/jobs?limit=50`, signal: this.#abort.signal });
            await page.body.text();
          }
        }
      }
    } catch (error) {
      if (!this.#abort.signal.aborted) throw error;
    }
  }

  async close(): Promise<void> {
    this.#abort.abort();
    await this.#done;
    await this.#pool.close();
  }
}

function dashboardCase(): BenchCase {
  let server: ForkedChild | undefined;
  let client: QueueClient | undefined;
  let url = '';
  const window = async (durationMs: number): Promise<{ rate: number; cpuPerJobUs: number }> => {
    const pid = server?.process.pid ?? 0;
    const cpu = readProc(pid)?.cpuMs ?? Number.NaN;
    const start = preciseNow();
    const until = start + durationMs;
    let jobs = 0;
    const c = client!;
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        while (preciseNow() < until) {
          const view = await c.json<JobView>('POST', '/runsync', { input: {} });
          if (view.status !== 'COMPLETED') throw new Error(`runsync answered ${view.status}`);
          jobs++;
        }
      }),
    );
    const elapsed = preciseNow() - start;
    return { rate: (jobs / elapsed) * 1000, cpuPerJobUs: (((readProc(pid)?.cpuMs ?? Number.NaN) - cpu) / jobs) * 1000 };
  };
  return {
    name: `runsync, ${CLIENTS} clients: no page, then one page`,
    metrics: {
      'jobs/s, no page': { unit: 'jobs/s' },
      'jobs/s, one page': { unit: 'jobs/s' },
      'throughput cost': { unit: '%' },
      'server CPU/job, no page': { unit: 'µs' },
      'server CPU/job, one page': { unit: 'µs' },
      'page ticks': { unit: '' },
    },
    async setup() {
      server = new ForkedChild(await childScript('bench/children/local-server.ts', 'compiled'), { env: { BENCH_ENDPOINT: ENDPOINT, BENCH_CONCURRENCY: '64' } });
      url = (await server.next<{ type: 'ready'; url: string }>('ready', 30_000)).url;
      client = new QueueClient(url, ENDPOINT, CLIENTS);
    },
    async measure({ quick, warmup }) {
      const durationMs = warmup ? 1_000 : quick ? 2_000 : 4_000;
      const off = await window(durationMs);
      const page = new PageSimulator(url);
      const on = await window(durationMs);
      const ticks = page.ticks;
      await page.close();
      return {
        'jobs/s, no page': off.rate,
        'jobs/s, one page': on.rate,
        'throughput cost': (1 - on.rate / off.rate) * 100,
        'server CPU/job, no page': off.cpuPerJobUs,
        'server CPU/job, one page': on.cpuPerJobUs,
        'page ticks': ticks,
      };
    },
    async teardown() {
      await client?.close();
      await server?.stop();
    },
  };
}

/** The attempt log's work per job, with no page open: a take, then the end (ns per job). */
function attemptLogCase(): BenchCase {
  const JOBS = 200_000;
  return {
    name: 'attempt log: take + end per job, at its cap',
    metrics: {
      'CPU ns/job, completed (worker API: take + end)': { unit: 'ns' },
      'CPU ns/job, completed (in process: end)': { unit: 'ns' },
      'CPU ns/job, failed (kept, at the cap)': { unit: 'ns' },
      'CPU ns/job, the loop alone (baseline: reading each job)': { unit: 'ns' },
    },
    async measure({ quick }) {
      const count = quick ? JOBS / 4 : JOBS;
      const jobs: JobAttemptFacts[] = Array.from({ length: count }, (_, i) => ({
        id: `job-${i}`,
        endpointId: 'bench',
        status: 'COMPLETED',
        attempt: 1,
        retries: 0,
        lost: 0,
        startedAt: i,
        endedAt: i + 1,
        resultFrom: { workerId: 'worker-1', attempt: 1 },
      }));
      const failed: JobAttemptFacts[] = jobs.map((job) => ({
        ...job,
        status: 'FAILED',
        error: { error_type: 'Error', error_message: 'boom', hostname: 'h', worker_id: 'w', runtime_version: '1' },
      }));
      // CPU time, not wall time: on a shared machine the wall clock counts other processes' turns.
      const timed = (work: (log: AttemptLog, job: JobAttemptFacts) => void, list = jobs): number => {
        const log = new AttemptLog();
        const start = process.cpuUsage();
        for (const job of list) work(log, job);
        const used = process.cpuUsage(start);
        return ((used.user + used.system) * 1e3) / count;
      };
      return {
        'CPU ns/job, completed (worker API: take + end)': timed((log, job) => {
          log.taken('bench', 'worker-1', [{ id: job.id, attempt: 1 }]);
          log.ended(job);
        }),
        'CPU ns/job, completed (in process: end)': timed((log, job) => log.ended(job)),
        'CPU ns/job, failed (kept, at the cap)': timed((log, job) => log.ended(job), failed),
        'CPU ns/job, the loop alone (baseline: reading each job)': timed((_log, job) => {
          if (job.retries < 0) throw new Error('unreachable');
        }),
      };
    },
  };
}

/** The jobs route's answers at 100 000 retained jobs (ms of one GET each, over loopback HTTP). */
function jobsRouteCase(): BenchCase {
  const JOBS = 100_000;
  let harness: Harness | undefined;
  let server: HarnessServer | undefined;
  let ids: string[] = [];
  const timed = async (path: string, check: (body: { total?: number; jobs?: Array<{ id: string }> }) => boolean): Promise<number> => {
    const started = preciseNow();
    const response = await fetch(`${server!.url}${path}`);
    const body = (await response.json()) as { total?: number; jobs?: Array<{ id: string }> };
    const ms = preciseNow() - started;
    if (response.status !== 200 || !check(body)) throw new Error(`${path} answered ${response.status}: ${JSON.stringify(body).slice(0, 300)}`);
    return ms;
  };
  const jobs = (query: string) => `/ui/api/endpoints/big/jobs${query}`;
  return {
    name: `jobs route at ${JOBS.toLocaleString('en')} retained jobs`,
    metrics: {
      'first page of 50': { unit: 'ms' },
      'last page': { unit: 'ms' },
      'state filter (10 of them)': { unit: 'ms' },
      'id search, exact': { unit: 'ms' },
      'id search, part': { unit: 'ms' },
      'text in input': { unit: 'ms' },
      'oldest first': { unit: 'ms' },
      'overview (one live tick)': { unit: 'ms' },
    },
    async setup() {
      harness = new Harness();
      server = await createHarnessServer({ harness, rateLimits: false, metrics: createMetrics({ defaultMetrics: false }), host: '127.0.0.1', port: 0 });
      const endpoint = harness.endpoint('big');
      ids = [];
      for (let i = 0; i < JOBS; i++) ids.push((await endpoint.submit({ input: { i } })).id);
      for (const id of ids.slice(0, 10)) await endpoint.cancel(id);
    },
    async measure() {
      const newest = ids.slice(-50).reverse().join();
      return {
        'first page of 50': await timed(jobs('?limit=50'), (body) => body.total === JOBS && body.jobs?.map((job) => job.id).join() === newest),
        'last page': await timed(jobs(`?offset=${JOBS - 50}&limit=50`), (body) => body.jobs?.map((job) => job.id).join() === ids.slice(0, 50).reverse().join()),
        'state filter (10 of them)': await timed(jobs('?state=CANCELLED'), (body) => body.total === 10),
        'id search, exact': await timed(jobs(`?q=${ids[54_321]}`), (body) => body.jobs?.[0]?.id === ids[54_321]),
        'id search, part': await timed(jobs(`?q=${ids[777]!.slice(0, 13).toUpperCase()}`), (body) => body.jobs?.some((job) => job.id === ids[777]) === true),
        'text in input': await timed(jobs('?text=%22i%22%3A54321%7D'), (body) => body.jobs?.[0]?.id === ids[54_321]),
        'oldest first': await timed(jobs('?order=oldest&limit=50'), (body) => body.jobs?.map((job) => job.id).join() === ids.slice(0, 50).join()),
        'overview (one live tick)': await timed('/ui/api/overview', () => true),
      };
    },
    async teardown() {
      await server?.close();
      await harness?.close();
    },
  };
}

export const dashboardBenchmark: Benchmark = {
  name: 'dashboard',
  title: 'Throughput cost of one open dashboard page (event stream + jobs page refetch per tick), runsync with 64 clients',
  cases: () => [dashboardCase(), attemptLogCase(), jobsRouteCase()],
};
