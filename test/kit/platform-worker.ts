/**
 * @module test/kit/platform-worker
 * A worker on the platform path against a platform a test scripts on 127.0.0.1: the
 * platform transport built from the RUNPOD_WEBHOOK_* variables of an origin
 * (platformTransportAt), a scripted platform that hands out one job once and leaves
 * job-stream and job-done to the test (startOneJobPlatform), and the worker runtime
 * running a handler with that transport until its one job ends (runOneJob). Imported
 * from this file, not the kit's index: it loads the worker runtime, which most tests
 * that use the kit do not need.
 */
import type { Job } from '../../src/job/index.js';
import { createPlatformTransport, type CreatePlatformTransportOptions, type PlatformTransport } from '../../src/transports/platform/index.js';
import { WorkerRuntime, resolveOptions, type Handler } from '../../src/worker/index.js';
import type { RunOutcome } from '../../src/worker/job-run.js';
import { json, startScriptedServer, type ScriptedAnswer, type ScriptedServer, type SeenRequest } from '../transports/platform/scripted-server.js';

/** The worker's id on these platforms (RUNPOD_POD_ID). */
export const TEST_WORKER_ID = 'w1';

/**
 * A platform transport whose take, done and stream URLs point at `origin` under
 * `/v2/ep/`, as worker `w1`, with no heartbeat and no gap between empty polls; `options`
 * (a logger at least) are the transport's own and win over these.
 */
export function platformTransportAt(origin: string, options: Omit<CreatePlatformTransportOptions, 'processEnv'>): PlatformTransport {
  return createPlatformTransport({
    processEnv: {
      RUNPOD_WEBHOOK_GET_JOB: `${origin}/v2/ep/job-take/$ID?`,
      RUNPOD_WEBHOOK_POST_OUTPUT: `${origin}/v2/ep/job-done/$RUNPOD_POD_ID/$ID?`,
      RUNPOD_WEBHOOK_POST_STREAM: `${origin}/v2/ep/job-stream/$RUNPOD_POD_ID/$ID?`,
      RUNPOD_POD_ID: TEST_WORKER_ID,
    },
    heartbeat: false,
    emptyPollGapMs: 0,
    ...options,
  });
}

export interface OneJobPlatformOptions {
  /** The job handed out; default `{id: 'j1', input: {}, attempt: 1}`. */
  readonly job?: Record<string, unknown>;
  /** Headers of the job-take answer that hands it out (what the platform advertises); default none. */
  readonly takeHeaders?: Readonly<Record<string, string>>;
  /** Answers job-stream posts; default `{acknowledged: true, applied: true}`. */
  readonly stream?: (request: SeenRequest) => ScriptedAnswer | Promise<ScriptedAnswer>;
  /** Answers job-done posts; default `{acknowledged: true, applied: true}`. */
  readonly done?: (request: SeenRequest) => ScriptedAnswer | Promise<ScriptedAnswer>;
}

const acknowledged = (): ScriptedAnswer => json({ acknowledged: true, applied: true });

/** A scripted platform that hands out one job on the first job-take; later takes, job-stop and anything else wait 200 ms and answer 204. */
export function startOneJobPlatform(options: OneJobPlatformOptions = {}): Promise<ScriptedServer> {
  let handedOut = false;
  return startScriptedServer(async (request): Promise<ScriptedAnswer> => {
    if (request.path.includes('/job-take/')) {
      if (handedOut) return { status: 204, delayMs: 200 };
      handedOut = true;
      const answer = json(options.job ?? { id: 'j1', input: {}, attempt: 1 });
      return { ...answer, headers: { ...answer.headers, ...options.takeHeaders } };
    }
    if (request.path.includes('/job-stream/')) return (options.stream ?? acknowledged)(request);
    if (request.path.includes('/job-done/')) return (options.done ?? acknowledged)(request);
    return { status: 204, delayMs: 200 };
  });
}

/** A worker runtime running `handler` with `transport`; `outcome` settles when its first job ends. Stop it with `runtime.stop()`. */
export function runOneJob(
  handler: Handler<unknown>,
  transport: PlatformTransport,
  logger: CreatePlatformTransportOptions['logger'],
  serve: Readonly<Record<string, unknown>> = {},
): { runtime: WorkerRuntime; outcome: Promise<RunOutcome> } {
  let ended: (outcome: RunOutcome) => void = () => {};
  const outcome = new Promise<RunOutcome>((resolve) => (ended = resolve));
  const runtime = new WorkerRuntime(handler, resolveOptions({ gpuSampling: false, ...serve }), transport, logger, {
    onJobEnd: (_job: Job, result: RunOutcome) => ended(result),
  });
  void runtime.start();
  return { runtime, outcome };
}
