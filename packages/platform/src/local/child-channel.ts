/**
 * @module local/child-channel
 * The supervisor's end of the IPC channel to the worker child of `--serve-api`
 * (serverless-worker's transports/supervised/channel-protocol.ts): jobs pushed to the
 * child, and its results, progress and stream chunks run as the worker API's own calls in
 * this process (harness/worker-api/direct-calls.ts: the same liveness, attempt,
 * stale-post and event rules as over HTTP), with no HTTP request, no socket and no route
 * per job. Its heartbeat and deadline watchdog are kept here (child-watch.ts): the child runs
 * no thread for them; and so is its job-stop wait: one standing wait on the worker API's
 * stops for the child, whose stops go to it as a `stops` message (it polls no job-stop over
 * HTTP, which held a request open and answered 204 every 30 s).
 *
 * Jobs are pushed against credits (issue 34): the child announces its slots, and while
 * fewer jobs than that are out with it, one standing take (the worker API's job-take, so
 * liveness, attempts and requeues are as for any take) waits for jobs and each job taken
 * goes to the child at once. A job is out from its push until its result or its `free`
 * arrives. Results applied are confirmed by id with the next message to the child (a
 * message of their own after ACK_DELAY_MS without one); one not applied or refused is
 * answered at once. Jobs pushed to a child that dies are its jobs in the store: the
 * supervisor puts them back in the queue when it exits, as any job it held.
 */
import type { ChildProcess } from 'node:child_process';
import type { Logger } from 'pino';
import {
  type ChildMessage,
  type Clock,
  MessageBatcher,
  readChildBatch,
  requestJsonText,
  runKey,
  ServerlessWorkerError,
  type SupervisorMessage,
  systemClock,
  type TimerHandle,
} from 'serverless-worker/internal';
import type { WorkerApiCalls } from '../harness/worker-api/index.js';
import { ChildWatch, type WatchedJob } from './child-watch.js';

/** How long results applied wait for a message to the child to ride with before they get one of their own, ms. */
export const ACK_DELAY_MS = 20;
/** After a take answered no job (the worker declared gone, the server closing) or failed, the pause before the next, ms. */
const TAKE_RETRY_MS = 1_000;

export interface ChildChannelOptions {
  readonly calls: WorkerApiCalls;
  readonly endpointId: string;
  readonly workerId: string;
  readonly logger: Logger;
  /** Jobs were taken for the child after it was gone: put its jobs back in the queue. */
  readonly onJobsAfterExit: () => void;
  /** The heartbeat this process sends for the child, ms (child-watch.ts). */
  readonly pingIntervalMs: number;
  /** The child blocked its event loop past a job's deadline (the job ended TIMED_OUT): kill it (child-watch.ts). */
  readonly onBlocked: () => void;
  /** Times the confirmations of results and the pause between takes; default the system clock. */
  readonly clock?: Clock;
}

/** Serve one child's channel until it exits. */
export function serveChildChannel(child: ChildProcess, options: ChildChannelOptions): void {
  new ChildChannel(child, options).listen();
}

class ChildChannel {
  readonly #child: ChildProcess;
  readonly #options: ChildChannelOptions;
  readonly #clock: Clock;
  readonly #messages: MessageBatcher<SupervisorMessage>;
  #gone = false;
  /** The child's slots, and the jobs out with it (by runKey; child-watch.ts reads their deadlines here). */
  #slots = 0;
  readonly #out = new Map<string, WatchedJob>();
  /** The standing take; `resized` when this end gave it up because the child's slots shrank. */
  #take: { readonly controller: AbortController; resized: boolean } | undefined;
  /**
   * The controller of the last take, reused by the next while it was not aborted: a take
   * per job, and Node makes an AbortSignal (an EventTarget) per controller on first use, about
   * 2 % of a busy --serve-api process's samples (bench/README, issue 34, third pass).
   */
  #spare: AbortController | undefined;
  #retry: TimerHandle | undefined;
  /** Results applied, not yet confirmed to the child. */
  #applied: number[] = [];
  #ackTimer: TimerHandle | undefined;
  /** The child's heartbeat and deadline watchdog, kept here. */
  readonly #watch: ChildWatch;
  /** Ends the standing job-stop wait (the child exited). */
  readonly #stopsWait = new AbortController();
  #stopsRetry: TimerHandle | undefined;

  constructor(child: ChildProcess, options: ChildChannelOptions) {
    this.#child = child;
    this.#options = options;
    this.#clock = options.clock ?? systemClock;
    this.#watch = new ChildWatch({
      calls: options.calls,
      endpointId: options.endpointId,
      workerId: options.workerId,
      logger: options.logger,
      clock: this.#clock,
      pingIntervalMs: options.pingIntervalMs,
      jobs: this.#out,
      onBlocked: options.onBlocked,
    });
    this.#messages = new MessageBatcher<SupervisorMessage>(
      (batch) => this.#send(batch),
      // The confirmations ride with whatever else goes to the child.
      () => this.#takeConfirmations(),
    );
  }

  listen(): void {
    const onMessage = (message: unknown): void => this.#onMessage(message);
    this.#child.on('message', onMessage);
    this.#child.once('exit', () => {
      this.#gone = true;
      this.#child.off('message', onMessage);
      this.#take?.controller.abort();
      this.#stopsWait.abort();
      this.#stopsRetry?.cancel();
      this.#retry?.cancel();
      this.#ackTimer?.cancel();
      this.#watch.stop();
    });
    this.#waitForStops();
  }

  /** The standing job-stop wait: each batch of stops goes to the child, in order with the jobs pushed before it. */
  #waitForStops(): void {
    const { calls, endpointId, workerId, logger } = this.#options;
    calls.stops(endpointId, workerId, this.#stopsWait.signal).then(
      (batch) => {
        // None: the child exited or the server is closing.
        if (this.#gone || batch === undefined) return;
        const stops = batch.jobIds.map((job) => {
          const attempt = batch.attempts[job];
          // A stop without a reason reads as a cancel, as the platform transport reads one.
          return { job, reason: batch.reasons[job] ?? ('cancelled' as const), ...(attempt !== undefined ? { attempt } : {}) };
        });
        if (stops.length > 0) this.#messages.push({ k: 'stops', stops });
        this.#waitForStops();
      },
      (error: unknown) => {
        if (this.#gone) return;
        logger.warn({ err: error, workerId }, 'waiting for job stops for the worker process failed; trying again shortly');
        this.#stopsRetry = this.#clock.setTimer(TAKE_RETRY_MS, () => {
          this.#stopsRetry = undefined;
          this.#waitForStops();
        });
      },
    );
  }

  #send(batch: SupervisorMessage[]): void {
    const { logger, workerId } = this.#options;
    if (this.#gone || !this.#child.connected) return;
    try {
      this.#child.send(batch, (error) => {
        if (error) logger.debug({ err: error, workerId }, 'a message to the worker process could not be sent');
      });
    } catch (error) {
      logger.debug({ err: error, workerId }, 'a message to the worker process could not be sent');
    }
  }

  #takeConfirmations(): SupervisorMessage | undefined {
    if (this.#applied.length === 0) return undefined;
    this.#ackTimer?.cancel();
    this.#ackTimer = undefined;
    const ids = this.#applied;
    this.#applied = [];
    return { k: 'applied', ids };
  }

  #confirm(id: number): void {
    this.#applied.push(id);
    this.#ackTimer ??= this.#clock.setTimer(ACK_DELAY_MS, () => {
      this.#ackTimer = undefined;
      this.#messages.poke();
    });
  }

  #fail(id: number, error: unknown): void {
    if (error instanceof ServerlessWorkerError) this.#messages.push({ k: 'error', id, code: error.code, message: error.message, status: error.status });
    else this.#messages.push({ k: 'error', id, code: 'SW_INTERNAL', message: error instanceof Error ? error.message : String(error), status: 500 });
  }

  #again(): void {
    this.#retry = this.#clock.setTimer(TAKE_RETRY_MS, () => {
      this.#retry = undefined;
      this.#pump();
    });
  }

  /** One standing take while the child has a free slot. */
  #pump(): void {
    if (this.#gone || this.#take !== undefined || this.#retry !== undefined) return;
    const free = this.#slots - this.#out.size;
    if (free <= 0) return;
    const controller = this.#spare !== undefined && !this.#spare.signal.aborted ? this.#spare : new AbortController();
    this.#spare = undefined;
    const current = { controller, resized: false };
    this.#take = current;
    const { calls, endpointId, workerId, logger } = this.#options;
    calls.take(endpointId, workerId, free, controller).then(
      (jobs) => {
        this.#take = undefined;
        this.#spare = controller;
        if (this.#gone) {
          if (jobs.length > 0) this.#options.onJobsAfterExit();
          return;
        }
        if (jobs.length > 0) {
          const pushedAt = this.#clock.now();
          for (const job of jobs) {
            this.#out.set(runKey(job.id, job.attempt), { id: job.id, attempt: job.attempt, pushedAt, timeoutMs: job.policy?.executionTimeout });
          }
          this.#watch.pushed();
          // As text: an input kept as the text received (job/raw-json.ts) goes on unparsed.
          this.#messages.push({ k: 'jobs', text: `[${jobs.map((job) => requestJsonText(job)).join(',')}]` });
          this.#pump();
        } else if (current.resized) this.#pump();
        else this.#again();
      },
      (error: unknown) => {
        this.#take = undefined;
        this.#spare = controller;
        logger.warn({ err: error, workerId }, 'a job take for the worker process failed; trying again shortly');
        if (!this.#gone) this.#again();
      },
    );
  }

  #handle(message: ChildMessage): void {
    const { calls, endpointId, workerId, logger } = this.#options;
    switch (message.k) {
      case 'credit': {
        const shrank = message.slots < this.#slots;
        this.#slots = message.slots;
        if (shrank && this.#take !== undefined) {
          this.#take.resized = true;
          this.#take.controller.abort();
        } else this.#pump();
        return;
      }
      case 'timeouts':
        this.#watch.timeouts(message.defaultMs, message.graceMs);
        return;
      case 'tick':
        // Heard already (#onMessage): the child's event loop turns.
        return;
      case 'free':
        if (this.#out.delete(runKey(message.job, message.attempt))) this.#pump();
        this.#watch.ended();
        return;
      case 'result':
        // Its slot is free again now: the next job can go while this result is stored.
        if (this.#out.delete(runKey(message.job, message.attempt))) this.#pump();
        this.#watch.ended();
        calls.done(endpointId, workerId, message.job, message.body, message.attempt, logger).then(
          (answer) => (answer.applied === false ? this.#messages.push({ k: 'answer', id: message.id, answer }) : this.#confirm(message.id)),
          (error: unknown) => this.#fail(message.id, error),
        );
        return;
      case 'done':
      case 'stream': {
        const call = message.k === 'done' ? calls.done : calls.stream;
        call(endpointId, workerId, message.job, message.body, message.attempt, logger).then(
          (answer) => this.#messages.push({ k: 'answer', id: message.id, answer }),
          (error: unknown) => this.#fail(message.id, error),
        );
        return;
      }
    }
  }

  #onMessage(message: unknown): void {
    const { logger, workerId } = this.#options;
    this.#watch.heard();
    const read = readChildBatch(message);
    for (const fault of read.faults) {
      logger.error({ workerId, problem: fault.problem }, `a message from the worker process is not one of the channel protocol (${fault.problem}); refused`);
      // A request with a readable id gets its refusal, with what was wrong (a result so refused is replaced by an error result).
      if (fault.id !== undefined)
        this.#messages.push({
          k: 'error',
          id: fault.id,
          code: 'SW_CHANNEL_PROTOCOL',
          message: `refused by the --serve-api process: ${fault.problem}`,
          status: 400,
        });
    }
    for (const entry of read.batch) this.#handle(entry);
  }
}
