/**
 * @module harness/openai/openai-call
 * One OpenAI-compatible call as a job. Without `stream` the caller waits for the job
 * and gets its output as JSON. With `stream: true` the answer is `text/event-stream`
 * built from the job's chunks as they arrive, ending `data: [DONE]`. Headers are
 * sent with the first event, so a job that fails before producing anything is still
 * answered with a plain JSON error and a non-2xx status; a job that fails mid-stream
 * ends the stream with an `data: {"error": ...}` event (the openai clients raise it).
 * A caller that goes away, or a wait longer than the harness's OpenAI timeout,
 * cancels the job: nobody is left to read its answer.
 */
import { once } from 'node:events';
import type { FastifyReply } from 'fastify';
import { type EndpointJobs, isTerminal, parseJobRequest, RUNSYNC_WAIT_MS, ServerlessWorkerError } from 'serverless-worker/internal';
import { requestSignal, type RequestSignal } from '../http/client-signal.js';
import { toServerlessWorkerError } from '../http/error-reply.js';
import { JobWatch } from '../http/job-watch.js';
import type { QueueApiContext } from '../queue-api/context.js';
import { openAiErrorBody } from './openai-errors.js';
import { jobEndError, openAiAnswer } from './openai-result.js';
import { SseFramer } from './sse-framer.js';

export interface OpenAiContext extends QueueApiContext {
  /** Longest an OpenAI call waits for its job, ms; then the job is cancelled and 504 answered. */
  readonly timeoutMs: number;
}

export interface OpenAiCall {
  readonly endpoint: EndpointJobs;
  /** `/v1/chat/completions`, ... */
  readonly route: string;
  readonly body: Record<string, unknown>;
  readonly stream: boolean;
}

/** Cancel the job if it is still queued or running. */
async function abandon(endpoint: EndpointJobs, jobId: string): Promise<void> {
  const job = await endpoint.find(jobId);
  if (job && !isTerminal(job.status)) await endpoint.cancel(jobId);
}

function stopError(waiting: RequestSignal, jobId: string, timeoutMs: number): ServerlessWorkerError {
  if (waiting.reason() === 'closing') {
    return new ServerlessWorkerError('SW_HARNESS_CLOSING', `The harness is shutting down; job ${jobId} was cancelled`, { jobId });
  }
  return new ServerlessWorkerError(
    'SW_OPENAI_JOB_TIMED_OUT',
    `Job ${jobId} did not end within the harness's OpenAI wait of ${timeoutMs} ms; it was cancelled`,
    { jobId, timeoutMs },
  );
}

/** Run `call` as a job and answer it on `reply`. */
export async function runOpenAiCall(context: OpenAiContext, call: OpenAiCall, reply: FastifyReply): Promise<unknown> {
  const request = parseJobRequest({ input: { openai_route: call.route, openai_input: call.body } });
  const submitted = await call.endpoint.submit(request, { sync: true, waitMs: RUNSYNC_WAIT_MS.default });
  void reply.header('x-request-id', submitted.id);
  const waiting = requestSignal(reply, context.closing);
  try {
    return call.stream
      ? await streamAnswer(context, call.endpoint, submitted.id, reply, waiting)
      : await plainAnswer(context, call.endpoint, submitted.id, waiting);
  } finally {
    waiting.dispose();
  }
}

async function plainAnswer(context: OpenAiContext, endpoint: EndpointJobs, jobId: string, waiting: RequestSignal): Promise<unknown> {
  const view = await endpoint.waitForEnd(jobId, context.timeoutMs, waiting.signal);
  if (!isTerminal(view.status)) {
    await abandon(endpoint, jobId);
    throw stopError(waiting, jobId, context.timeoutMs);
  }
  if (view.status !== 'COMPLETED') throw jobEndError(view);
  const answer = openAiAnswer(view.output, (await endpoint.find(jobId)) ? (await endpoint.readStream(jobId)).stream : []);
  if (answer === undefined) {
    throw new ServerlessWorkerError('SW_OPENAI_JOB_FAILED', `Job ${jobId} completed without any output to answer with`, {
      jobId,
      status: view.status,
    });
  }
  return answer;
}

async function streamAnswer(context: OpenAiContext, endpoint: EndpointJobs, jobId: string, reply: FastifyReply, waiting: RequestSignal): Promise<unknown> {
  const framer = new SseFramer();
  const watch = new JobWatch(endpoint, jobId);
  const clock = context.harness.clock;
  const deadline = clock.now() + context.timeoutMs;
  const res = reply.raw;
  let started = false;
  let chunksSeen = 0;

  const write = async (text: string): Promise<void> => {
    if (text.length === 0 || res.destroyed) return;
    if (!started) {
      started = true;
      void reply.hijack();
      res.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache',
        'x-request-id': jobId,
      });
    }
    if (!res.write(text)) await Promise.race([once(res, 'drain'), once(res, 'close')]);
  };
  /** Before any event: a JSON error answer; after: a final error event. */
  const fail = async (error: ServerlessWorkerError): Promise<void> => {
    if (!started) throw error;
    await write(framer.event(JSON.stringify(openAiErrorBody(error))));
  };

  try {
    for (;;) {
      const job = await endpoint.find(jobId);
      const { status, stream } = await endpoint.readStream(jobId);
      chunksSeen += stream.length;
      await write(stream.map((chunk) => framer.frame(chunk.output)).join(''));
      if (isTerminal(status)) {
        if (status !== 'COMPLETED') {
          await fail(jobEndError(await endpoint.status(jobId)));
        } else {
          // A worker that answered a stream request without streaming: its output is the one event.
          if (chunksSeen === 0 && job?.output !== undefined) await write(framer.frame(openAiAnswer(job.output, [])));
          await write(framer.done());
        }
        break;
      }
      const wake = await watch.next(deadline - clock.now(), clock, waiting.signal);
      if (wake === 'changed') continue;
      await abandon(endpoint, jobId);
      // Nobody is left to read an error event.
      if (started && waiting.reason() === 'client-gone') break;
      await fail(stopError(waiting, jobId, context.timeoutMs));
      break;
    }
  } catch (error) {
    // Before the first event fastify answers the error; after it, the stream ends with it.
    if (!started) throw error;
    await write(framer.event(JSON.stringify(openAiErrorBody(toServerlessWorkerError(error)))));
  } finally {
    watch.close();
    if (started && !res.writableEnded) res.end();
  }
  return reply;
}
