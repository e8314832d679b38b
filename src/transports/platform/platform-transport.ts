/**
 * @module transports/platform/platform-transport
 * The worker side of the platform's worker protocol (worker-protocol.md section 1):
 * - take: the job-take long poll (take-loop.ts);
 * - results: `POST <done>&isStream=false|true` with `{output}` or `{error: "<JSON
 *   text of the error payload>"}`, plus `stopPod: true` when the worker must be
 *   recycled; retried until they land or `resultDeadlineMs` passes (deliver.ts);
 * - stream chunks: `POST <stream>&isStream=false` with `{output, metrics}`, retried
 *   the same way (chunk-posts.ts); one job's chunks one post at a time, so a retried
 *   chunk is the same chunk, never skipped and never overtaken; where the job-take
 *   answer advertised that the other side orders chunks by `stream_index` (our harness),
 *   up to `chunkWindow` (16) posts in flight, and where it also advertised batches,
 *   several chunks in one post;
 * - progress: `POST <done>&isStream=false` with `{status: "IN_PROGRESS", output}`,
 *   best effort, one in flight per run (job and attempt), the latest value winning;
 * - attempts: a job that carried `attempt` (our harness) gets `&attempt=N` on its
 *   progress, chunk and result posts; the platform sends none and sees none. A 409
 *   SW_STALE_ATTEMPT (an older attempt's post) is logged at debug and rejects the post
 *   with that code (progress: dropped);
 * - take on done: where the job-take answer advertised it (`x-sw-take-on-done`, our
 *   harness), the next take rides on a result post made in the same turn (done-takes.ts);
 * - result size: a result body over `maxResultBytes` (20 MB) is not posted; it
 *   rejects with SW_RESULT_TOO_LARGE;
 * - stop: the job-stop long poll (stop-poller.ts) while a job is held;
 * - heartbeat: the watchdog thread (../watchdog/), started with the first take; with
 *   `watchdog` options the same thread also times out jobs whose handler blocks the
 *   event loop, posts their results itself and ends the process;
 * - unhealthy: `GET <ping>?status=unhealthy&check=..&reason=..` once.
 *
 * Chunk metrics (`metrics` beside `output`, which the local harness keeps and orders
 * by; `chunkMetrics: false` sends `{output}` alone): see chunk-posts.ts.
 */
import type { Logger } from 'pino';
import { ServerlessWorkerError, runKey, type Job, type JobResult, type StreamChunk } from '../../job/index.js';
import { assertResultFits } from '../result-limits.js';
import type { PostResultOptions, ResultReceipt, StopListener, TakeRequest, Transport } from '../transport.js';
import { systemClock, withinTime, type BackoffPolicy, type Clock } from '../../clock/index.js';
import { RetryWake, deliver, isStaleAttemptAnswer, type DeliveryPolicy } from './deliver.js';
import type { HttpAnswer as DeliveredAnswer } from './http-client.js';
import type { JobWatch, Watchdog } from '../watchdog/index.js';
import { KeyRefusedReporter } from './key-refused.js';
import { PlatformHttp } from './http-client.js';
import { resolvePlatformSettings, type PlatformTransportMetrics, type PlatformTransportOptions, type PlatformTransportSettings } from './options.js';
import { resolveWorkerId, type PlatformEnv } from './platform-env.js';
import { createPlatformWatchdog } from './platform-watchdog.js';
import { sendUnhealthyReport } from './unhealthy-report.js';
import { ProgressLanes } from './progress-lanes.js';
import { StopPoller } from './stop-poller.js';
import { StopListeners } from '../stop-listeners.js';
import { ChunkPosts } from './chunk-posts.js';
import { DoneTakes, type JoinedFirst } from './done-takes.js';
import { TakeLoop } from './take-loop.js';
import { buildPlatformUrls, urlForLog, type PlatformUrls } from './urls.js';

export class PlatformTransport implements Transport {
  readonly kind = 'platform';
  readonly workerId: string;
  readonly maxResultBytes: number;
  /** The settings in force, defaults applied. */
  readonly settings: PlatformTransportSettings;
  readonly #env: PlatformEnv;
  readonly #urls: PlatformUrls;
  readonly #http: PlatformHttp;
  readonly #logger: Logger;
  readonly #metrics: PlatformTransportMetrics | undefined;
  /** The heartbeat and deadline watchdog thread. */
  readonly #heartbeat: Watchdog | undefined;
  readonly #watchesJobs: boolean;
  readonly #stopPoller: StopPoller | undefined;
  readonly #listeners: StopListeners;
  /** Aborts takes and polls on close. */
  readonly #closing = new AbortController();
  /** Aborts posts still retrying once the close drain time is over. */
  readonly #abandon = new AbortController();
  readonly #deliveries = new Set<Promise<unknown>>();
  /** Ends the waits of the posts between their attempts (retryNow). */
  readonly #wake = new RetryWake();
  readonly #progress = new ProgressLanes();
  readonly #pollBackoff: BackoffPolicy;
  /** 401/403 from the worker API: one error naming RUNPOD_AI_API_KEY, not a warning per poll. */
  readonly #keyRefused: KeyRefusedReporter;
  readonly #deliveryPolicy: DeliveryPolicy;
  readonly #clock: Clock;
  readonly #takeLoop: TakeLoop;
  readonly #chunks: ChunkPosts;
  readonly #doneTakes = new DoneTakes();
  #started = false;
  #closed: Promise<void> | undefined;

  constructor(options: PlatformTransportOptions) {
    this.settings = resolvePlatformSettings(options);
    this.maxResultBytes = this.settings.maxResultBytes;
    this.#env = options.env;
    this.#logger = options.logger;
    this.#listeners = new StopListeners(options.logger);
    this.#metrics = options.metrics;
    this.#clock = options.clock ?? systemClock;
    this.workerId = resolveWorkerId(options.env, options.workerId);
    this.#urls = buildPlatformUrls(options.env, this.workerId);
    this.#http = new PlatformHttp({
      clock: this.#clock,
      maxConnections: this.settings.maxConnections,
      ...(options.env.apiKey !== undefined ? { apiKey: options.env.apiKey } : {}),
    });
    const s = this.settings;
    this.#pollBackoff = { minMs: s.pollBackoffMinMs, maxMs: s.pollBackoffMaxMs };
    this.#keyRefused = new KeyRefusedReporter(this.#logger, options.env.apiKey !== undefined);
    this.#deliveryPolicy = {
      deadlineMs: s.resultDeadlineMs,
      minDelayMs: s.retryMinDelayMs,
      maxDelayMs: s.retryMaxDelayMs,
      attemptTimeoutMs: s.requestTimeoutMs,
    };
    const ping = this.#urls.ping;
    this.#watchesJobs = options.watchdog !== undefined;
    this.#heartbeat = createPlatformWatchdog({
      urls: this.#urls,
      workerId: this.workerId,
      apiKey: options.env.apiKey,
      pingIntervalMs: options.env.pingIntervalMs,
      heartbeat: s.heartbeat,
      watchdog: options.watchdog,
      deliveryPolicy: this.#deliveryPolicy,
      logger: this.#logger,
      metrics: this.#metrics,
      onKeyRefused: (status) => this.#keyRefused.refusedBy('heartbeat', status),
    });
    if (ping === undefined) {
      this.#logger.warn('RUNPOD_WEBHOOK_PING is not set: no heartbeat, so the platform cannot tell that this worker is alive');
    }
    const stop = this.#urls.stop;
    if (stop !== undefined) {
      this.#stopPoller = new StopPoller({
        http: this.#http,
        url: stop,
        pollTimeoutMs: s.pollTimeoutMs,
        backoff: this.#pollBackoff,
        logger: this.#logger,
        clock: this.#clock,
        onStop: (jobId, reason, attempt) => this.#listeners.emit(jobId, reason, attempt),
      });
    } else {
      this.#logger.warn({ url: urlForLog(options.env.getJobUrl) }, 'RUNPOD_WEBHOOK_GET_JOB has no /job-take/ segment: no job-stop poll and no batch take');
    }
    this.#chunks = new ChunkPosts({ urls: this.#urls, settings: s, deliver: (url, body, jobId, what) => this.#deliver(url, body, jobId, what) });
    this.#takeLoop = new TakeLoop({
      http: this.#http,
      urls: this.#urls,
      settings: s,
      backoff: this.#pollBackoff,
      keyRefused: this.#keyRefused,
      logger: this.#logger,
      clock: this.#clock,
      // The answer that hands out jobs says how their chunks may be posted (chunk-posts.ts), and whether a take may ride on a result post.
      onJobs: (answer) => {
        this.#chunks.heard(answer);
        this.#doneTakes.heard(answer);
      },
      joinDone: (max, inProgress) => this.#doneTakes.take(max, inProgress),
    });
    if (options.env.postStreamUrl === undefined) {
      this.#logger.info('RUNPOD_WEBHOOK_POST_STREAM is not set: a streaming handler will fail its jobs');
    }
  }

  /**
   * The caller's take signal joined with closing, made once per caller signal: the
   * runtime passes the same one on every take, and a new AbortSignal.any per take (two
   * listeners on long-lived signals) was an allocation per job that lived until GC.
   */
  #takeSignal(callerSignal: AbortSignal): AbortSignal {
    if (this.#joinedTake?.caller !== callerSignal) this.#joinedTake = { caller: callerSignal, joined: AbortSignal.any([callerSignal, this.#closing.signal]) };
    return this.#joinedTake.joined;
  }

  #joinedTake: { readonly caller: AbortSignal; readonly joined: AbortSignal } | undefined;

  /** Take up to `max` jobs (long poll, take-loop.ts); answers [] once `signal` aborts or the transport closes. */
  async take(request: TakeRequest): Promise<Job[]> {
    this.#startBackground();
    // Heartbeat and watchdog up before the first job: its handler may block the loop at once.
    await this.#heartbeat?.ready;
    return this.#takeLoop.take(Math.max(1, Math.floor(request.max)), request.inProgress, this.#takeSignal(request.signal));
  }

  /**
   * Chunk posts of one job in flight at once: `chunkWindow` once the platform advertised
   * ordering by stream_index and chunks carry it (chunkMetrics); else 1. The real
   * platform does not advertise, and how it orders concurrent posts is not documented.
   */
  get chunkWindow(): number {
    return this.#chunks.window;
  }

  /** Several chunks in one post, once the platform advertised that too (`x-sw-stream-batch`, chunk-posts.ts); undefined: one a post. */
  get chunkBatch(): { readonly perPost: number; readonly inFlight: number } | undefined {
    return this.#chunks.batch;
  }

  postChunk(jobId: string, chunk: StreamChunk, attempt?: number): Promise<void> {
    return this.#chunks.post(jobId, chunk, attempt);
  }

  postChunks(jobId: string, chunks: readonly StreamChunk[], attempt?: number): Promise<void> {
    return this.#chunks.postMany(jobId, chunks, attempt);
  }

  /** Best effort: one post in flight per run (job and attempt); a newer value replaces one still waiting. */
  postProgress(jobId: string, output: unknown, attempt?: number): Promise<void> {
    let body: string;
    try {
      body = JSON.stringify({ status: 'IN_PROGRESS', output });
    } catch (error) {
      return Promise.reject(error);
    }
    return this.#progress.post(runKey(jobId, attempt), async () => {
      const answer = await this.#http.post(this.#urls.done(jobId, false, attempt), body, {
        signal: this.#abandon.signal,
        timeoutMs: this.settings.requestTimeoutMs,
      });
      if (isStaleAttemptAnswer(answer)) {
        this.#logger.debug({ requestId: jobId, attempt }, 'progress of a stale attempt refused by the platform; dropped');
        return;
      }
      if (answer.status < 200 || answer.status >= 300) throw new Error(`progress post answered HTTP ${answer.status}`);
    });
  }

  async postResult(jobId: string, result: JobResult, options: PostResultOptions): Promise<ResultReceipt> {
    // This run's waiting progress value must not land after its result; other attempts' lanes stay.
    this.#progress.drop(runKey(jobId, options.attempt));
    const body: Record<string, unknown> = result.kind === 'output' ? { output: result.output } : { error: JSON.stringify(result.error) };
    if (options.stopPod) body.stopPod = true;
    const text = JSON.stringify(body);
    assertResultFits(jobId, text, this.maxResultBytes, options.isStream);
    const url = this.#urls.done(jobId, options.isStream, options.attempt);
    // Closing: no take comes, and the drain counts only posts under way.
    const answer = await this.#doneTakes.post(url, this.#closing.signal.aborted, (join) => this.#deliver(url, text, jobId, 'result', join));
    return this.#doneTakes.receiptOf(answer);
  }

  /**
   * Start the heartbeat (and deadline watchdog) thread if it is not yet, and wait until it
   * is up: what take does before its first poll. For a transport that takes jobs by
   * another channel and keeps this one for the rest (the supervised child's, ../supervised/).
   */
  async startBackground(): Promise<void> {
    this.#startBackground();
    await this.#heartbeat?.ready;
  }

  /**
   * Posts waiting to be tried again (results, chunks) try again now, not after their
   * backoff: the platform is reachable again (a worker whose harness was gone saw a
   * connection to its address open, local/harness-gone.ts).
   */
  retryNow(): void {
    this.#wake.wake();
  }

  /** Results and chunks being posted now (those waiting to be tried again too). */
  get deliveriesUnderWay(): number {
    return this.#deliveries.size;
  }

  /** The deadline watchdog, when the transport was made with `watchdog` options (for the runtime's jobs). */
  get jobWatch(): JobWatch | undefined {
    return this.#watchesJobs ? this.#heartbeat : undefined;
  }

  setJobsInProgress(jobIds: readonly string[]): void {
    this.#startBackground();
    this.#heartbeat?.setJobs(jobIds);
    this.#stopPoller?.setActive(jobIds.length > 0 && !this.#closed);
  }

  onStop(listener: StopListener): () => void {
    return this.#listeners.add(listener);
  }

  /** `GET <ping>?status=unhealthy&check=<check>&reason=<at most 256 chars>`, tried a few times; never rejects. */
  reportUnhealthy(check: string, reason: string): Promise<void> {
    return sendUnhealthyReport(
      { http: this.#http, ping: this.#urls.ping, timeoutMs: this.settings.requestTimeoutMs, logger: this.#logger, clock: this.#clock },
      check,
      reason,
    );
  }

  /**
   * Stop the polls, give posts under way `closeDrainMs` to land (then abandon them:
   * each rejects, is logged and counted), stop the heartbeat, close the connections.
   * Posts that start during the drain count too: a run still finishing posts its result
   * after its last chunk. The heartbeat runs until the posts are done, so that the
   * platform does not take the worker for dead (and requeue its jobs) while its last
   * results are landing.
   */
  close(): Promise<void> {
    this.#closed ??= this.#close();
    return this.#closed;
  }

  async #close(): Promise<void> {
    this.#closing.abort();
    this.#progress.close();
    this.#stopPoller?.close();
    if (!(await this.#drain(this.settings.closeDrainMs))) {
      this.#logger.error({ posts: this.#deliveries.size }, 'closing: posts still retrying after the drain time are abandoned');
      this.#abandon.abort();
      await Promise.allSettled([...this.#deliveries]);
    }
    this.#abandon.abort();
    await this.#heartbeat?.stop();
    this.#listeners.clear();
    await this.#http.close();
  }

  /** Wait until no post is under way, also those started meanwhile, or `ms` passes; answers whether none is left. */
  async #drain(ms: number): Promise<boolean> {
    const deadline = this.#clock.now() + ms;
    for (;;) {
      // A run goes from one post to the next (its last chunk, then its result) without
      // waiting on a timer or I/O: after a turn of the event loop the next one is under way.
      await new Promise<void>((resolve) => setImmediate(resolve));
      if (this.#deliveries.size === 0) return true;
      const left = deadline - this.#clock.now();
      if (left <= 0) return false;
      await withinTime(Promise.allSettled([...this.#deliveries]), left, undefined, this.#clock);
    }
  }

  #startBackground(): void {
    if (this.#started || this.#closed) return;
    this.#started = true;
    if (this.#heartbeat && !this.#heartbeat.start()) this.#logger.error('no heartbeat: the platform may take this worker for dead');
    this.#logger.info(
      {
        workerId: this.workerId,
        endpointId: this.#env.endpointId,
        take: urlForLog(this.#urls.take(false)),
        pingIntervalMs: this.#heartbeat ? this.#env.pingIntervalMs : undefined,
      },
      'platform transport started',
    );
  }

  async #deliver(url: string, body: string, jobId: string, what: string, join?: JoinedFirst): Promise<DeliveredAnswer> {
    const delivery = deliver({
      http: this.#http,
      url,
      ...(join !== undefined ? { firstUrl: join.firstUrl, onFirst: join.onFirst } : {}),
      body,
      jobId,
      what,
      policy: this.#deliveryPolicy,
      signal: this.#abandon.signal,
      clock: this.#clock,
      wake: this.#wake,
      onRetry: ({ attempt, error, status }) => {
        this.#metrics?.resultPostRetriesTotal.inc();
        this.#logger.warn({ requestId: jobId, attempt, status, err: error }, `${what} post failed; retrying`);
      },
    });
    this.#deliveries.add(delivery);
    try {
      const { attempts, answer } = await delivery;
      if (attempts > 1) this.#logger.info({ requestId: jobId, attempts }, `${what} delivered after retries`);
      return answer;
    } catch (error) {
      if (error instanceof ServerlessWorkerError && error.code === 'SW_STALE_ATTEMPT') {
        this.#logger.debug({ requestId: jobId, err: error }, `${what} of a stale attempt refused by the platform; dropped`);
        throw error;
      }
      this.#metrics?.resultPostGiveUpsTotal.inc();
      this.#logger.error({ requestId: jobId, err: error }, `${what} could not be delivered`);
      throw error;
    } finally {
      this.#deliveries.delete(delivery);
    }
  }
}
