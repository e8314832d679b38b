/**
 * @module local/child-channel
 * The supervisor's end of the IPC channel to the worker child of `--serve-api`
 * (serverless-worker's transports/supervised/channel-protocol.ts): the child's takes,
 * results, progress and stream chunks run as the worker API's own calls in this process
 * (harness/worker-api/direct-calls.ts: the same liveness, attempt, stale-post and event
 * rules as over HTTP), with no HTTP request, no socket and no route per job. Answers go
 * back batched per turn of the event loop. The child's heartbeat, job-stop poll and its
 * watchdog's result posts stay on HTTP.
 */
import type { ChildProcess } from 'node:child_process';
import type { Logger } from 'pino';
import { ServerlessWorkerError, requestJsonText } from 'serverless-worker/internal/job/index.js';
import {
  MessageBatcher,
  readChildBatch,
  type ChildMessage,
  type SupervisorMessage,
} from 'serverless-worker/internal/transports/supervised/channel-protocol.js';
import type { WorkerApiCalls } from '../harness/worker-api/index.js';

export interface ChildChannelOptions {
  readonly calls: WorkerApiCalls;
  readonly endpointId: string;
  readonly workerId: string;
  readonly logger: Logger;
  /** Jobs were taken for the child after it was gone: put its jobs back in the queue. */
  readonly onJobsAfterExit: () => void;
}

/** Serve one child's channel until it exits. */
export function serveChildChannel(child: ChildProcess, options: ChildChannelOptions): void {
  const { calls, endpointId, workerId, logger } = options;
  const takes = new Map<number, AbortController>();
  let gone = false;
  const out = new MessageBatcher<SupervisorMessage>((batch) => {
    if (gone || !child.connected) return;
    try {
      child.send(batch, (error) => {
        if (error) logger.debug({ err: error, workerId }, 'a message to the worker process could not be sent');
      });
    } catch (error) {
      logger.debug({ err: error, workerId }, 'a message to the worker process could not be sent');
    }
  });
  const fail = (id: number, error: unknown): void => {
    if (error instanceof ServerlessWorkerError) out.push({ k: 'error', id, code: error.code, message: error.message, status: error.status });
    else out.push({ k: 'error', id, code: 'SW_INTERNAL', message: error instanceof Error ? error.message : String(error), status: 500 });
  };
  const handle = (message: ChildMessage): void => {
    switch (message.k) {
      case 'take': {
        const controller = new AbortController();
        takes.set(message.id, controller);
        calls.take(endpointId, workerId, message.max, controller).then(
          (jobs) => {
            takes.delete(message.id);
            if (gone && jobs.length > 0) {
              options.onJobsAfterExit();
              return;
            }
            // As text: an input kept as the text received (job/raw-json.ts) goes on unparsed.
            out.push({ k: 'jobs', id: message.id, text: `[${jobs.map((job) => requestJsonText(job)).join(',')}]` });
          },
          (error: unknown) => {
            takes.delete(message.id);
            logger.warn({ err: error, workerId }, 'a job take of the worker process failed');
            out.push({ k: 'jobs', id: message.id, text: '[]' });
          },
        );
        return;
      }
      case 'cancel':
        takes.get(message.id)?.abort();
        return;
      case 'done':
      case 'stream': {
        const call = message.k === 'done' ? calls.done : calls.stream;
        call(endpointId, workerId, message.job, message.body, message.attempt, logger).then(
          (answer) => out.push({ k: 'answer', id: message.id, answer }),
          (error: unknown) => fail(message.id, error),
        );
        return;
      }
    }
  };
  const onMessage = (message: unknown): void => {
    const read = readChildBatch(message);
    if (!read.ok) {
      logger.error({ workerId, problem: read.problem }, `a message from the worker process is not one of the channel protocol (${read.problem}); ignored`);
      return;
    }
    for (const entry of read.batch) handle(entry);
  };
  child.on('message', onMessage);
  child.once('exit', () => {
    gone = true;
    child.off('message', onMessage);
    for (const controller of takes.values()) controller.abort();
    takes.clear();
  });
}
