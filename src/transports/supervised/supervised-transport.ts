/**
 * @module transports/supervised/supervised-transport
 * The transport of the worker child of `--serve-api` (SW_SUPERVISOR_CHANNEL=ipc): its
 * jobs, results, progress and stream chunks go over the child's IPC channel to the
 * supervisor, which runs the worker API's own calls on them in its process
 * (channel-protocol.ts). No HTTP request and no take per job: the child announces its
 * slots (the runtime's concurrency) once, the supervisor pushes each job as soon as it has
 * taken it, and the jobs wait here until the runtime's take asks for them; a result is one
 * message, answered only when it was not applied (an applied one is confirmed with the
 * next jobs pushed). A job that ends without a result (cancelled, expired) gives its slot
 * back with a `free` message.
 *
 * Stops come over the channel too (`stops`: the supervisor keeps the worker API's job-stop
 * wait for this child), so the platform transport's job-stop poll never runs here; its
 * unhealthy report goes over HTTP to the same harness. The heartbeat and the deadline watchdog are the supervisor's
 * (local/child-watch.ts in the platform package): this child runs no thread for them (a
 * V8 isolate, about 13 MiB on Node 24). It tells the supervisor its default execution
 * timeout and grace once, and ticks while it holds jobs; a child silent past a job's
 * deadline plus grace is blocked, and the supervisor times the job out and replaces it. A
 * real platform worker never uses this transport: only a child whose supervisor set the
 * variable and opened the channel.
 */
import type { Logger } from 'pino';
import { ServerlessWorkerError, runKey, type Job, type JobResult, type StreamChunk } from '../../job/index.js';
import { sleep, systemClock, type Clock, type TimerHandle } from '../../clock/index.js';
import { HeldList } from '../../collections/held-list.js';
import { assertResultFits } from '../result-limits.js';
import type { PostResultOptions, ResultReceipt, StopListener, TakeRequest, Transport } from '../transport.js';
import { MAX_SLOTS, TICK_MS, type ChannelStop } from './channel-protocol.js';
import type { JobWatch } from '../watchdog/index.js';
import type { PlatformTransport } from '../platform/platform-transport.js';
import { ProgressLanes } from '../platform/progress-lanes.js';
import { StopListeners } from '../stop-listeners.js';
import { readTakeAnswer } from '../platform/take-answer.js';
import type { SupervisorLink } from './supervisor-link.js';

export interface SupervisedTransportOptions {
  /** The platform transport from the same variables, with no heartbeat or watchdog of its own: job-stop, unhealthy report. */
  readonly platform: PlatformTransport;
  readonly link: SupervisorLink;
  readonly logger: Logger;
  /** The worker's default execution timeout and its grace, ms: told to the supervisor, which watches the deadlines; none with `deadlineWatchdog: false` (no ticks either). */
  readonly timeouts?: { readonly defaultMs: number; readonly graceMs: number } | undefined;
  /** Times the ticks; default the system clock. */
  readonly clock?: Clock;
}

export class SupervisedTransport implements Transport {
  readonly kind = 'supervised';
  readonly #platform: PlatformTransport;
  readonly #link: SupervisorLink;
  readonly #logger: Logger;
  readonly #closing = new AbortController();
  /** Posts under way (a HeldList: one comes and goes once a job, collections/held-list.ts). */
  readonly #posts = new HeldList<Promise<unknown>>();
  readonly #progress = new ProgressLanes();
  #closed: Promise<void> | undefined;
  /** Jobs pushed by the supervisor that the runtime has not taken yet. */
  readonly #buffer: Job[] = [];
  /** Jobs handed to the runtime whose run has not ended (runKey), and whether their result was sent. */
  readonly #handed = new Map<string, { resulted: boolean }>();
  /** Those of #handed whose result was not sent: the slots the supervisor counts as taken. */
  #unresulted = 0;
  readonly #stopListeners: StopListeners;
  /** Wakes a take waiting for jobs. */
  #wake: (() => void) | undefined;
  readonly #clock: Clock;
  /** The next tick, while jobs are handed (the supervisor's watchdog hears the event loop turn). */
  #ticker: TimerHandle | undefined;
  /** Whether the supervisor watches the deadlines (the timeouts were given): only then the ticks. */
  readonly #watched: boolean;

  constructor(options: SupervisedTransportOptions) {
    this.#platform = options.platform;
    this.#link = options.link;
    this.#logger = options.logger;
    this.#clock = options.clock ?? systemClock;
    this.#stopListeners = new StopListeners(options.logger);
    this.#link.onJobs(this.#received);
    this.#link.onStops(this.#stopped);
    this.#watched = options.timeouts !== undefined;
    if (options.timeouts !== undefined) this.#link.timeouts(options.timeouts.defaultMs, options.timeouts.graceMs);
  }

  /** Tick every TICK_MS while a job is handed; the timer keeps no process alive. */
  #tickWhileHolding(): void {
    if (!this.#watched || this.#ticker !== undefined || this.#handed.size === 0) return;
    this.#ticker = this.#clock.setTimer(TICK_MS, () => {
      this.#ticker = undefined;
      if (this.#handed.size === 0) return;
      this.#link.tick();
      this.#tickWhileHolding();
    });
  }

  get workerId(): string {
    return this.#platform.workerId;
  }

  get maxResultBytes(): number {
    return this.#platform.maxResultBytes;
  }

  /** The platform transport's deadline watchdog (its thread posts a blocked job's result over HTTP). */
  get jobWatch(): JobWatch | undefined {
    return this.#platform.jobWatch;
  }

  /** The caller's take signal joined with closing, made once per caller signal (the runtime passes the same one every take). */
  #takeSignal(callerSignal: AbortSignal): AbortSignal {
    if (this.#joinedTake?.caller !== callerSignal) {
      const joined = AbortSignal.any([callerSignal, this.#closing.signal]);
      // No more pushes once the runtime stops taking (draining, closing).
      joined.addEventListener('abort', () => this.#link.credit(0), { once: true });
      this.#joinedTake = { caller: callerSignal, joined };
    }
    return this.#joinedTake.joined;
  }

  #joinedTake: { readonly caller: AbortSignal; readonly joined: AbortSignal } | undefined;

  /** Jobs pushed by the supervisor: kept until the runtime's take asks for them. */
  readonly #received = (text: string): void => {
    const outcome = readTakeAnswer({ status: 200, contentType: 'application/json', text });
    if (outcome.kind !== 'jobs') {
      this.#logger.error({ outcome: outcome.kind }, 'the supervisor pushed a jobs message that is not a JSON array of jobs; ignored');
      return;
    }
    if (outcome.invalid > 0) this.#logger.error({ skipped: outcome.invalid }, 'the supervisor pushed job(s) without id or input; skipped');
    if (outcome.jobs.length === 0) return;
    this.#buffer.push(...outcome.jobs);
    this.#wake?.();
  };

  /**
   * Up to `max` of the jobs the supervisor pushed, waiting for one if none is here. The
   * slots announced are the runtime's concurrency: `max` (its free slots) plus the jobs
   * whose result it has not sent (a job whose result is being posted holds no slot of the
   * supervisor's, and none of the runtime's once it posts in the background); announced
   * again only when that changes.
   */
  async take(request: TakeRequest): Promise<Job[]> {
    // Heartbeat and watchdog up before the first job, as the platform transport's take does.
    await this.#platform.startBackground();
    const signal = this.#takeSignal(request.signal);
    if (signal.aborted) return [];
    const max = Math.max(1, Math.floor(request.max));
    this.#link.credit(Math.min(MAX_SLOTS, max + this.#unresulted));
    if (this.#buffer.length === 0) {
      // The channel keeps the process alive while a take waits, as a long poll would.
      const release = this.#link.hold();
      await new Promise<void>((resolve) => {
        const wake = (): void => {
          signal.removeEventListener('abort', wake);
          this.#wake = undefined;
          resolve();
        };
        this.#wake = wake;
        signal.addEventListener('abort', wake, { once: true });
      });
      release();
    }
    // Jobs pushed after the take was given up stay here: they go back to the queue with this worker when it exits.
    if (signal.aborted) return [];
    const jobs = this.#buffer.splice(0, max);
    for (const job of jobs) this.#handed.set(runKey(job.id, job.attempt), { resulted: false });
    this.#unresulted += jobs.length;
    this.#tickWhileHolding();
    return jobs;
  }

  /** A run ended: one that sent no result (cancelled, expired) gives its slot back to the supervisor. */
  runEnded(job: Job): void {
    const key = runKey(job.id, job.attempt);
    const handed = this.#handed.get(key);
    if (handed === undefined) return;
    this.#handed.delete(key);
    if (handed.resulted) return;
    this.#unresulted--;
    this.#link.free(job.id, job.attempt);
  }

  async postChunk(jobId: string, chunk: StreamChunk, attempt?: number): Promise<void> {
    const body =
      this.#platform.settings.chunkMetrics && chunk.metrics !== undefined ? { output: chunk.output, metrics: chunk.metrics } : { output: chunk.output };
    await this.#post('stream', jobId, attempt, JSON.stringify(body), 'stream chunk');
  }

  /** Best effort: one post in flight per run, the latest value winning (as the platform transport's). */
  postProgress(jobId: string, output: unknown, attempt?: number): Promise<void> {
    let body: string;
    try {
      body = JSON.stringify({ status: 'IN_PROGRESS', output });
    } catch (error) {
      return Promise.reject(error);
    }
    return this.#progress.post(runKey(jobId, attempt), async () => {
      try {
        await this.#post('done', jobId, attempt, body, 'progress');
      } catch (error) {
        if (error instanceof ServerlessWorkerError && error.code === 'SW_STALE_ATTEMPT') return;
        throw error;
      }
    });
  }

  async postResult(jobId: string, result: JobResult, options: PostResultOptions): Promise<ResultReceipt> {
    this.#progress.drop(runKey(jobId, options.attempt));
    const body: Record<string, unknown> = result.kind === 'output' ? { output: result.output } : { error: JSON.stringify(result.error) };
    if (options.stopPod) body.stopPod = true;
    const text = JSON.stringify(body);
    assertResultFits(jobId, text, this.maxResultBytes, options.isStream);
    // Its slot goes back to the supervisor with it: no free message when the run ends.
    const handed = this.#handed.get(runKey(jobId, options.attempt));
    if (handed !== undefined && !handed.resulted) {
      handed.resulted = true;
      this.#unresulted--;
    }
    const answer = await this.#post('result', jobId, options.attempt, text, 'result');
    return answer.applied === false ? { applied: false, ...(typeof answer.reason === 'string' ? { reason: answer.reason } : {}) } : { applied: true };
  }

  /** Nothing to tell the platform transport: its heartbeat is off and its job-stop poll never starts (the supervisor keeps both). */
  setJobsInProgress(): void {}

  onStop(listener: StopListener): () => void {
    return this.#stopListeners.add(listener);
  }

  /** The supervisor's stops, to the runtime's listeners. */
  readonly #stopped = (stops: readonly ChannelStop[]): void => {
    for (const stop of stops) this.#stopListeners.emit(stop.job, stop.reason, stop.attempt);
  };

  reportUnhealthy(check: string, reason: string): Promise<void> {
    return this.#platform.reportUnhealthy(check, reason);
  }

  /** Stop taking, give posts under way the platform transport's close drain time, then close it (heartbeat last) and the link. */
  close(): Promise<void> {
    this.#closed ??= this.#close();
    return this.#closed;
  }

  async #close(): Promise<void> {
    this.#closing.abort();
    this.#progress.close();
    const deadline = systemClock.now() + this.#platform.settings.closeDrainMs;
    for (;;) {
      // A run goes from its last chunk to its result within a turn: look again after one.
      await new Promise<void>((resolve) => setImmediate(resolve));
      const left = deadline - systemClock.now();
      if (this.#posts.size === 0 || left <= 0) break;
      await Promise.race([Promise.allSettled(this.#posts.values()), sleep(left)]);
    }
    if (this.#posts.size > 0)
      this.#logger.error({ posts: this.#posts.size }, 'closing: posts to the supervisor still unanswered after the drain time are abandoned');
    this.#ticker?.cancel();
    this.#ticker = undefined;
    await this.#platform.close();
    this.#link.close();
  }

  async #post(
    kind: 'result' | 'done' | 'stream',
    jobId: string,
    attempt: number | undefined,
    body: string,
    what: string,
  ): Promise<Readonly<Record<string, unknown>>> {
    const post = this.#link.post(kind, jobId, attempt, body);
    const posted = this.#posts.add(post);
    try {
      const reply = await post;
      if (reply.ok) return reply.answer;
      if (reply.code === 'SW_STALE_ATTEMPT') {
        this.#logger.debug({ requestId: jobId, attempt }, `${what} of a stale attempt refused by the supervisor; dropped`);
        throw new ServerlessWorkerError(
          'SW_STALE_ATTEMPT',
          `The ${what} of job ${jobId} was refused: it belongs to an attempt of the job that is no longer current (${reply.message.slice(0, 200)})`,
          {
            jobId,
            what,
          },
        );
      }
      throw new ServerlessWorkerError(
        'SW_RESULT_UNDELIVERED',
        `The ${what} of job ${jobId} could not be posted to the --serve-api process: ${reply.status > 0 ? `it refused it with HTTP ${reply.status} ${reply.code}` : 'the channel to it is closed'} (${reply.message.slice(0, 500)})`,
        { jobId, what, attempts: 1, ...(reply.status > 0 ? { lastStatus: reply.status } : {}) },
      );
    } catch (error) {
      if (!(error instanceof ServerlessWorkerError && error.code === 'SW_STALE_ATTEMPT'))
        this.#logger.error({ requestId: jobId, err: error }, `${what} could not be delivered`);
      throw error;
    } finally {
      posted();
    }
  }
}
