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
 */
import { Pool } from 'undici';
import { ForkedChild } from './lib/child.js';
import { childScript } from './lib/compiled.js';
import { QueueClient, preciseNow, type JobView } from './lib/http-client.js';
import { readProc } from './lib/proc.js';
import type { BenchCase, Benchmark } from './lib/runner.js';
import { AttemptLog, type JobAttemptFacts } from '../packages/platform/src/harness/dashboard/attempt-log.js';

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

export const dashboardBenchmark: Benchmark = {
  name: 'dashboard',
  title: 'Throughput cost of one open dashboard page (event stream + jobs page refetch per tick), runsync with 64 clients',
  cases: () => [dashboardCase(), attemptLogCase()],
};
