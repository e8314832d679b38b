/**
 * @module harness/dashboard/live-hub
 * Live updates for every open dashboard page, over Server-Sent Events, from one
 * fan-out. While at least one page is connected, one timer ticks every
 * `sampleIntervalMs` and sends all pages the same `tick` (endpoint rows, workers, the
 * new chart point, panels), and the hub counts jobs into the charts as they end. A
 * page on a job's view also gets that job's changes and stream chunks, pushed from
 * the job's change listener (one listener per watched job, whatever the number of
 * pages). With no page open the hub holds no timer and no listener: the harness pays
 * nothing for it.
 *
 * Events: `hello` (the state now, once: the chart history comes from /ui/api/overview), `tick`, `job` (the job view, views.ts
 * JobDetail: on connect and on each change of what the job page shows other than its
 * chunks: status, progress output, attempt, retries, worker, a webhook delivery ended,
 * GPU samples), `chunk` ({ index, output, clippedBytes? }), `chunks-missed` (a count
 * read by a /stream client before the page could see them), `chunks-skipped` ({ from,
 * count }: a burst too large to send, loaded on demand), `chunks-reset`, `job-gone`. A
 * change that only adds chunks sends the chunks alone. Every message is small whatever
 * the job holds: values travel as previews (value-preview.ts).
 */
import type { ServerResponse } from 'node:http';
import { type EndpointJobs, type Harness, repeatEvery, type StoredJob, type StreamChunk, type TimerHandle } from 'serverless-worker/internal';
import type { LaunchedWorkersView } from '../launcher/launched-workers-view.js';
import { GpuJobLog } from './gpu-job-log.js';
import type { LiveEventName, LiveEvents, LiveSnapshot, PanelView } from './page-views.js';
import type { DashboardSettings } from './settings.js';
import { Series } from './series.js';
import { endpointRows, gpuView, jobDetail, workerRows } from './views.js';
import type { WorkerHistory } from './worker-history.js';
import { jobRunner } from './job-runner.js';
import type { WebhookLog } from './webhook-log.js';
import { VIEW_CHUNKS, previewChunk, previewValue } from './value-preview.js';

/** A page whose send buffer grows past this is too slow: it is dropped (it reconnects). */
const MAX_BUFFERED_BYTES = 4 * 1024 * 1024;

interface Client {
  readonly res: ServerResponse;
  watch?: JobWatcher;
}

interface JobWatcher {
  readonly key: string;
  readonly endpoint: EndpointJobs;
  readonly jobId: string;
  readonly clients: Set<Client>;
  readonly unsubscribe: () => void;
  /** The change being sent now: changes are sent one after the other. */
  sending: Promise<void>;
  /** Chunks already sent (the job's chunkCount when last seen). */
  sent: number;
  /** What the page was last sent of the job, apart from chunks (jobShown). */
  shown: string;
  /** A change is queued and not yet read: further changes until then are read with it. */
  queued: boolean;
}

export interface LiveHubOptions {
  readonly harness: Harness;
  readonly settings: DashboardSettings;
  readonly webhookLog: WebhookLog;
  /** Per-job GPU summaries (in-process workers); default an empty one (no GPU source). */
  readonly gpuJobLog?: GpuJobLog;
  /** Epoch ms; default the harness's clock (which also times the ticks). */
  readonly now?: () => number;
  /** Endpoint names by id (the management API's); default none. Read at most every NAMES_TTL_MS. */
  readonly endpointNames?: () => Promise<Readonly<Record<string, string>>>;
  /** Workers the harness runs itself (the launcher): their counts in the endpoint rows; default none. */
  readonly launchedWorkers?: LaunchedWorkersView | undefined;
  /** Workers that left, and the jobs each finished; default none kept. */
  readonly workerHistory?: WorkerHistory;
}

/** How long endpoint names read are used before they are read again (a tick is every second). */
const NAMES_TTL_MS = 5_000;

/**
 * What the job page shows of `job` apart from its chunks, as one string: a change of it
 * sends the job again. The output is compared by value (a store answers copies); it is
 * small while a job runs (progress), and read once more when it ends; a large one is
 * compared by its size and beginning (what the page shows of it).
 */
function jobShown(job: StoredJob, deliveries: number, gpuSamples: number): string {
  return JSON.stringify([
    job.status,
    job.attempt,
    job.retries,
    job.lost,
    job.workerId ?? null,
    job.startedAt ?? null,
    job.endedAt ?? null,
    job.expiresAt,
    deliveries,
    gpuSamples,
    job.error !== undefined ? previewValue(job.error) : null,
    job.output !== undefined ? previewValue(job.output) : null,
  ]);
}

/** One SSE frame. */
export function sseFrame<E extends LiveEventName>(event: E, data: LiveEvents[E]): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

export class LiveHub {
  readonly #harness: Harness;
  readonly #settings: DashboardSettings;
  readonly #webhookLog: WebhookLog;
  readonly #gpuJobLog: GpuJobLog;
  readonly #now: () => number;
  readonly #endpointNames: (() => Promise<Readonly<Record<string, string>>>) | undefined;
  readonly #launchedWorkers: LaunchedWorkersView | undefined;
  readonly #workerHistory: WorkerHistory | undefined;
  #names: { at: number; names: Readonly<Record<string, string>> } | undefined;
  readonly #clients = new Set<Client>();
  readonly #watchers = new Map<string, JobWatcher>();
  readonly series: Series;
  #timer: TimerHandle | undefined;
  #unbindEnded: (() => void) | undefined;
  /** The chart history's rebuild when the first page connected: `hello` waits for it, so that the page's read of the history has it. */
  #rebuilt: Promise<void> = Promise.resolve();
  #closed = false;

  constructor(options: LiveHubOptions) {
    this.#harness = options.harness;
    this.#settings = options.settings;
    this.#webhookLog = options.webhookLog;
    this.#gpuJobLog = options.gpuJobLog ?? new GpuJobLog({ fed: false });
    this.#now = options.now ?? (() => options.harness.clock.now());
    this.#endpointNames = options.endpointNames;
    this.#launchedWorkers = options.launchedWorkers;
    this.#workerHistory = options.workerHistory;
    this.series = new Series(options.settings.sampleIntervalMs, options.settings.historyMinutes);
  }

  /** Pages connected now. */
  get clientCount(): number {
    return this.#clients.size;
  }

  /** Jobs watched now (one listener each). */
  get watchedJobs(): number {
    return this.#watchers.size;
  }

  /** Whether the hub holds a timer and listeners (only while a page is open). */
  get active(): boolean {
    return this.#timer !== undefined;
  }

  /** The state a page starts from (also GET /ui/api/overview). */
  async snapshot(): Promise<LiveSnapshot> {
    const now = this.#now();
    const workers = await workerRows(this.#harness, now, this.#launchedWorkers);
    const history = this.#workerHistory;
    if (history) {
      history.observe(
        workers.map((w) => ({ id: w.id, endpointId: w.endpointId, firstSeenAt: Date.parse(w.firstSeenAt), lastSeenAt: Date.parse(w.lastSeenAt) })),
        now,
      );
      for (const row of workers) row.jobsDone = history.jobsDone(row.endpointId, row.id);
    }
    return {
      now,
      endpoints: await endpointRows(this.#harness, await this.#namesNow(now), this.#launchedWorkers),
      workers,
      departedWorkers: history?.departed() ?? [],
      gpu: gpuView(this.#settings.gpu !== undefined, this.#settings.gpu?.latest()),
      panels: await this.#panels(),
    };
  }

  /** Endpoint names, read again when older than NAMES_TTL_MS; a failed read keeps the last ones (names are a courtesy). */
  async #namesNow(now: number): Promise<Readonly<Record<string, string>>> {
    if (!this.#endpointNames) return {};
    if (this.#names && now - this.#names.at < NAMES_TTL_MS) return this.#names.names;
    try {
      this.#names = { at: now, names: await this.#endpointNames() };
    } catch {
      this.#names = { at: now, names: this.#names?.names ?? {} };
    }
    return this.#names.names;
  }

  /**
   * Serve one page on `res` (headers already sent): the history, then ticks, and the
   * job `watch` names, if any. Ends when the page goes away or the hub closes.
   */
  async connect(res: ServerResponse, watch?: { endpointId: string; jobId: string }): Promise<void> {
    if (this.#closed) {
      res.end();
      return;
    }
    const client: Client = { res };
    if (this.#clients.size === 0) this.#start();
    this.#clients.add(client);
    res.on('close', () => this.#drop(client));
    await this.#rebuilt;
    // The chart history is not in it: with many endpoints and a long history it is megabytes, and a
    // live message stays small; the page reads it from /ui/api/overview (over HTTP) instead.
    this.#send(client, 'hello', {
      ...(await this.snapshot()),
      sampleIntervalMs: this.#settings.sampleIntervalMs,
      historyMinutes: this.#settings.historyMinutes,
    });
    if (watch && this.#clients.has(client)) await this.#watch(client, watch.endpointId, watch.jobId);
  }

  /** End every page and stop: the server is closing. */
  close(): void {
    this.#closed = true;
    for (const client of [...this.#clients]) {
      client.res.end();
      this.#drop(client);
    }
  }

  #start(): void {
    this.#rebuilt = this.#allJobs().then(
      (jobs) => this.series.rebuild(jobs, this.#now()),
      () => {},
    );
    const disposers: Array<() => void> = [];
    const stopWatching = this.#harness.onEndpoint((endpoint) => {
      disposers.push(endpoint.jobEnded.add((job) => this.series.jobEnded(job)));
    });
    // A webhook delivery that ended is shown on its job's page: sent like a change of the job.
    const stopDeliveries = this.#webhookLog.onRecord((jobId) => {
      for (const watcher of this.#watchers.values()) if (watcher.jobId === jobId) this.#changed(watcher);
    });
    this.#unbindEnded = () => {
      stopWatching();
      stopDeliveries();
      for (const dispose of disposers.splice(0)) dispose();
    };
    this.#timer = repeatEvery(this.#harness.clock, this.#settings.sampleIntervalMs, () => void this.#tick());
    this.#settings.gpu?.start?.();
  }

  #stop(): void {
    this.#timer?.cancel();
    this.#timer = undefined;
    this.#unbindEnded?.();
    this.#unbindEnded = undefined;
    this.#settings.gpu?.stop?.();
  }

  async #allJobs(): Promise<StoredJob[]> {
    const all: StoredJob[] = [];
    for (const endpoint of this.#harness.endpoints()) all.push(...(await endpoint.jobs()));
    return all;
  }

  async #panels(): Promise<PanelView[]> {
    return Promise.all(
      this.#settings.panels.map(async (panel) => {
        try {
          return { id: panel.id, title: panel.title, data: await panel.snapshot() };
        } catch (error) {
          return { id: panel.id, title: panel.title, data: { error: error instanceof Error ? error.message : String(error) } };
        }
      }),
    );
  }

  async #tick(): Promise<void> {
    const snapshot = await this.snapshot();
    const queued = Object.fromEntries(snapshot.endpoints.map((row) => [row.id, row.queueDepth]));
    const point = this.series.close(this.#now(), this.#settings.gpu?.latest(), queued);
    const frame = sseFrame('tick', { ...snapshot, point });
    for (const client of [...this.#clients]) this.#write(client, frame);
  }

  #send<E extends LiveEventName>(client: Client, event: E, data: LiveEvents[E]): void {
    this.#write(client, sseFrame(event, data));
  }

  #write(client: Client, frame: string): void {
    if (client.res.writableEnded || client.res.destroyed) return;
    client.res.write(frame);
    if (client.res.writableLength > MAX_BUFFERED_BYTES) client.res.destroy();
  }

  #drop(client: Client): void {
    if (!this.#clients.delete(client)) return;
    const watcher = client.watch;
    if (watcher) {
      watcher.clients.delete(client);
      if (watcher.clients.size === 0) {
        watcher.unsubscribe();
        this.#watchers.delete(watcher.key);
      }
    }
    if (this.#clients.size === 0) this.#stop();
  }

  async #watch(client: Client, endpointId: string, jobId: string): Promise<void> {
    const endpoint = this.#harness.findEndpoint(endpointId);
    const job = await endpoint?.find(jobId);
    const pending = (await endpoint?.peekStream(jobId)) ?? [];
    if (!endpoint || !job) {
      this.#send(client, 'job-gone', { endpointId, jobId });
      return;
    }
    const key = `${endpointId}\u0000${jobId}`;
    let watcher = this.#watchers.get(key);
    if (!watcher) {
      const created: JobWatcher = {
        key,
        endpoint,
        jobId,
        clients: new Set(),
        unsubscribe: endpoint.onJobChange(jobId, () => this.#changed(created)),
        sending: Promise.resolve(),
        sent: job.chunkCount,
        shown: this.#shown(job),
        queued: false,
      };
      watcher = created;
      this.#watchers.set(key, watcher);
    }
    watcher.clients.add(client);
    client.watch = watcher;
    // The job as it is now; its pending chunks end at index sent - 1.
    this.#send(client, 'job', await this.#detail(job, pending));
  }

  async #detail(job: StoredJob, pending: readonly StreamChunk[]): Promise<ReturnType<typeof jobDetail>> {
    const runner = await jobRunner(job, { harness: this.#harness, local: this.#settings.localWorkers, launched: this.#launchedWorkers });
    return jobDetail(job, pending, this.#webhookLog.forJob(job.id), this.#gpuJobLog.forJob(job.endpointId, job.id, runner));
  }

  #shown(job: StoredJob): string {
    return jobShown(job, this.#webhookLog.forJob(job.id).length, this.#gpuJobLog.samples(job.endpointId, job.id));
  }

  /**
   * The watched job changed: its changes are sent one after the other, and a burst of
   * them (a fast stream: one per chunk) is read once, not once per change.
   */
  #changed(watcher: JobWatcher): void {
    if (watcher.queued) return;
    watcher.queued = true;
    watcher.sending = watcher.sending
      .then(() => {
        watcher.queued = false;
        return this.#jobChanged(watcher);
      })
      .catch(() => {});
  }

  async #jobChanged(watcher: JobWatcher): Promise<void> {
    const job = await watcher.endpoint.find(watcher.jobId);
    const unread = (await watcher.endpoint.peekStream(watcher.jobId)) ?? [];
    const frames: string[] = [];
    if (!job) {
      frames.push(sseFrame('job-gone', { endpointId: watcher.endpoint.id, jobId: watcher.jobId }));
    } else {
      if (job.chunkCount < watcher.sent) {
        // Requeued or retried: the stream starts again.
        watcher.sent = 0;
        frames.push(sseFrame('chunks-reset', { jobId: job.id }));
      }
      const fresh = job.chunkCount - watcher.sent;
      if (fresh > 0) {
        const visible = Math.min(fresh, unread.length);
        if (visible < fresh) frames.push(sseFrame('chunks-missed', { count: fresh - visible }));
        // A burst larger than a job view's chunks sends its last ones: the page loads earlier ones on demand.
        const sent = Math.min(visible, VIEW_CHUNKS);
        if (sent < visible) frames.push(sseFrame('chunks-skipped', { from: job.chunkCount - visible, count: visible - sent }));
        const tail = unread.slice(unread.length - sent);
        tail.forEach((chunk, i) => frames.push(sseFrame('chunk', previewChunk(job.chunkCount - sent + i, chunk))));
        watcher.sent = job.chunkCount;
      }
      const shown = this.#shown(job);
      if (shown !== watcher.shown) {
        watcher.shown = shown;
        frames.push(sseFrame('job', await this.#detail(job, unread)));
      }
    }
    if (frames.length === 0) return;
    const text = frames.join('');
    for (const client of [...watcher.clients]) this.#write(client, text);
  }
}
