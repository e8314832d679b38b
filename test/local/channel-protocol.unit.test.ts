/**
 * The IPC channel between `--serve-api` and its worker child (channel-protocol.ts): its
 * messages are checked by hand rather than by zod (issue 34, CPU per job). A well-formed
 * batch passes as it is; a malformed message is refused with what was wrong and the good
 * ones beside it are served. Jobs are pushed against the slots the child announced (issue
 * 34, push): one standing take, a slot back with each result or `free`, a result answered
 * only when not applied, the applied ones confirmed with the next message to the child.
 */
import { EventEmitter } from 'node:events';
import type { ChildProcess } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import type { Job } from '../../src/job/index.js';
import { TICK_MS, readChildBatch, readSupervisorBatch } from '../../src/transports/supervised/channel-protocol.js';
import { SupervisedTransport } from '../../src/transports/supervised/supervised-transport.js';
import { platformTransportAt } from '../kit/platform-worker.js';
import { SupervisorLink, type IpcPort } from '../../src/transports/supervised/supervisor-link.js';
import { ACK_DELAY_MS, serveChildChannel } from '../../packages/platform/src/local/child-channel.js';
import type { DirectAnswer, WorkerApiCalls } from '../../packages/platform/src/harness/worker-api/index.js';
import type { StopBatch } from '../../packages/platform/src/harness/worker-api/pending-stops.js';
import { ManualClock } from '../../src/clock/index.js';
import { captureLogs } from '../transports/platform/log-capture.js';

/** One end of a channel: what it sent, and a way to deliver it a message. */
class FakeEnd extends EventEmitter {
  readonly sent: unknown[] = [];
  connected = true;
  readonly channel = { ref: (): void => undefined, unref: (): void => undefined };
  send(message: unknown, ...rest: unknown[]): boolean {
    this.sent.push(message);
    const callback = rest.find((arg) => typeof arg === 'function') as ((error: Error | null) => void) | undefined;
    callback?.(null);
    return true;
  }
}

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
/** Two turns: a promise settled in this one, then the message its callback queued for the end of the next. */
const settle = async (): Promise<void> => {
  await turn();
  await turn();
};

describe('the channel messages, checked by hand', () => {
  it('passes well-formed batches as they are', () => {
    const child = [
      { k: 'credit', slots: 8 },
      { k: 'result', id: 1, job: 'j1', attempt: 2, body: '{"output":1}' },
      { k: 'free', job: 'j2', attempt: 1 },
      { k: 'done', id: 2, job: 'j1', body: '{"status":"IN_PROGRESS","output":1}' },
      { k: 'stream', id: 3, job: 'j1', body: '{"output":"a"}' },
    ];
    expect(readChildBatch(child)).toEqual({ batch: child, faults: [] });
    const supervisor = [
      { k: 'jobs', text: '[]' },
      {
        k: 'stops',
        stops: [
          { job: 'j1', reason: 'cancelled', attempt: 2 },
          { job: 'j2', reason: 'timeout' },
        ],
      },
      { k: 'applied', ids: [1, 4] },
      { k: 'answer', id: 1, answer: { applied: true } },
      { k: 'error', id: 2, code: 'SW_STALE_ATTEMPT', message: 'stale', status: 409 },
    ];
    expect(readSupervisorBatch(supervisor)).toEqual({ batch: supervisor, faults: [] });
  });

  it.each([
    [{ k: 'credit', slots: 1 }, 'expected a non-empty array of messages, got {"k":"credit","slots":1}', undefined],
    [[], 'expected a non-empty array of messages, got []', undefined],
    [['credit'], 'message 0: not an object: "credit"', undefined],
    [[{ k: 'credit', slots: -1 }], 'message 0: slots -1 is not an integer from 0 to 10000', undefined],
    [[{ k: 'result', id: -1, job: 'j', body: '{}' }], 'message 0: id -1 is not an integer >= 0', undefined],
    [[{ k: 'result', id: 1, job: '', body: '{}' }], 'message 0: job "" is not a job id (a non-empty string)', 1],
    [[{ k: 'free', job: 'j', attempt: 0 }], 'message 0: attempt 0 is not an integer >= 1', undefined],
    [[{ k: 'stream', id: 1, job: 'j', body: { output: 1 } }], 'message 0: body {"output":1} is not a string (the JSON text of the post)', 1],
    [[{ k: 'take', id: 1, max: 1 }], 'message 0: k "take" is not one of "credit", "timeouts", "tick", "result", "free", "done", "stream"', 1],
  ])('refuses a malformed message from the child, saying what is wrong: %j', (message, problem, id) => {
    expect(readChildBatch(message)).toEqual({
      batch: [],
      faults: [{ index: Array.isArray(message) && message.length > 0 ? 0 : -1, ...(id !== undefined ? { id } : {}), problem }],
    });
  });

  it('keeps the good messages beside a malformed one', () => {
    const good = { k: 'result', id: 1, job: 'j1', body: '{"output":1}' };
    expect(readChildBatch([{ k: 'credit', slots: 2 }, { k: 'result', id: 2, job: 'j2', body: 7 }, good])).toEqual({
      batch: [{ k: 'credit', slots: 2 }, good],
      faults: [{ index: 1, id: 2, problem: 'message 1: body 7 is not a string (the JSON text of the post)' }],
    });
  });

  it.each([
    [[{ k: 'jobs', text: [] }], 'message 0: text [] is not a string (a JSON array of jobs)'],
    [[{ k: 'applied', ids: [1, 'a'] }], 'message 0: ids [1,"a"] is not an array of integers >= 0'],
    [[{ k: 'answer', id: 0, answer: [1] }], 'message 0: answer [1] is not an object'],
    [[{ k: 'error', id: 0, code: 'X', message: 'm', status: 1.5 }], 'message 0: status 1.5 is not an integer'],
    [[{ k: 'credit', slots: 1 }], 'message 0: k "credit" is not one of "jobs", "stops", "applied", "answer", "error"'],
    [[{ k: 'stops', stops: [] }], 'message 0: stops [] is not a non-empty array'],
    [[{ k: 'stops', stops: ['j1'] }], 'message 0: a stop "j1" is not an object'],
    [[{ k: 'stops', stops: [{ job: '', reason: 'cancelled' }] }], `message 0: a stop's job "" is not a job id (a non-empty string)`],
    [[{ k: 'stops', stops: [{ job: 'j1', reason: 'cancelled', attempt: 0 }] }], "message 0: a stop's attempt 0 is not an integer >= 1"],
    [[{ k: 'stops', stops: [{ job: 'j1', reason: 'killed' }] }], `message 0: a stop's reason "killed" is not one of "cancelled", "timeout", "expired"`],
  ])('refuses a malformed message from the supervisor, saying what is wrong: %j', (message, problem) => {
    expect(readSupervisorBatch(message).faults.map((fault) => fault.problem)).toEqual([problem]);
  });
});

describe("the child's link", () => {
  it('logs a malformed message and answers the next good one; a result is settled by its id in `applied`', async () => {
    const logs = captureLogs();
    const port = new FakeEnd();
    const link = new SupervisorLink(port as unknown as IpcPort, logs.logger);
    const pushed: string[] = [];
    link.onJobs((text) => pushed.push(text));
    link.credit(4);
    link.credit(4);
    const progress = link.post('done', 'job-1', 1, '{"status":"IN_PROGRESS","output":1}');
    const result = link.post('result', 'job-1', 1, '{"output":1}');
    link.free('job-2', 3);
    await turn();
    // One message for the turn; the same slots are announced once.
    expect(port.sent).toEqual([
      [
        { k: 'credit', slots: 4 },
        { k: 'done', id: 0, job: 'job-1', attempt: 1, body: '{"status":"IN_PROGRESS","output":1}' },
        { k: 'result', id: 1, job: 'job-1', attempt: 1, body: '{"output":1}' },
        { k: 'free', job: 'job-2', attempt: 3 },
      ],
    ]);
    port.emit('message', [{ k: 'answer', id: 0, answer: 'yes' }]);
    expect(logs.find('is not one of the channel protocol (message 0: answer "yes" is not an object); ignored', 50)).toHaveLength(1);
    // `applied` names results only: it does not settle the progress post (id 0).
    port.emit('message', [
      { k: 'jobs', text: '[{"id":"job-3","input":{}}]' },
      { k: 'applied', ids: [0, 1] },
    ]);
    expect(await result).toEqual({ ok: true, answer: { acknowledged: true, applied: true } });
    expect(pushed).toEqual(['[{"id":"job-3","input":{}}]']);
    port.emit('message', [{ k: 'answer', id: 0, answer: { acknowledged: true, applied: true } }]);
    expect(await progress).toEqual({ ok: true, answer: { acknowledged: true, applied: true } });
    link.close();
  });

  it("tells the supervisor its timeouts at once, and ticks while it holds a job (the supervisor's watchdog hears it)", async () => {
    const { port, clock, transport, controller, taken } = await supervisedChild({ defaultMs: 5_000, graceMs: 1_000 });
    expect(transport.jobWatch).toBeUndefined();
    expect(port.sent[0]).toEqual([{ k: 'timeouts', defaultMs: 5_000, graceMs: 1_000 }]);
    const [job] = await taken;
    expect(job?.id).toBe('a');
    const ticks = (): number => port.sent.flat().filter((message) => (message as { k: string }).k === 'tick').length;
    clock.advance(TICK_MS);
    clock.advance(TICK_MS);
    await turn();
    expect(ticks()).toBe(2);
    // The run ended: its slot goes back, and the ticks stop.
    transport.runEnded(job as Job);
    clock.advance(5 * TICK_MS);
    await turn();
    expect(ticks()).toBe(2);
    expect(port.sent.flat()).toContainEqual({ k: 'free', job: 'a', attempt: 1 });
    controller.abort();
    await transport.close();
  });

  it("hands the supervisor's stops to the runtime's stop listeners, job by job with reason and attempt", async () => {
    const { port, transport, controller, taken } = await supervisedChild(undefined);
    expect((await taken).map((job) => job.id)).toEqual(['a']);
    const heard: Array<[string, string, number | undefined]> = [];
    const off = transport.onStop((jobId, reason, attempt) => heard.push([jobId, reason, attempt]));
    // The runtime tells the transport what it holds; nothing of it goes anywhere (no job-stop poll in this child).
    transport.setJobsInProgress();
    port.emit('message', [
      {
        k: 'stops',
        stops: [
          { job: 'a', reason: 'cancelled', attempt: 1 },
          { job: 'b', reason: 'timeout' },
        ],
      },
    ]);
    expect(heard).toEqual([
      ['a', 'cancelled', 1],
      ['b', 'timeout', undefined],
    ]);
    // A listener taken off hears no more.
    off();
    port.emit('message', [{ k: 'stops', stops: [{ job: 'a', reason: 'expired' }] }]);
    expect(heard).toHaveLength(2);
    controller.abort();
    await transport.close();
  });

  it('says no timeouts and never ticks with the deadline watchdog off (no timeouts given)', async () => {
    const { port, clock, transport, controller, taken } = await supervisedChild(undefined);
    expect((await taken).map((job) => job.id)).toEqual(['a']);
    clock.advance(5 * TICK_MS);
    await turn();
    expect(port.sent.flat().map((message) => (message as { k: string }).k)).toEqual(['credit']);
    controller.abort();
    await transport.close();
  });
});

/** The child's transport over a fake channel (`timeouts` as the child gives them), its take under way and job `a` pushed to it. */
async function supervisedChild(timeouts: { defaultMs: number; graceMs: number } | undefined) {
  const logs = captureLogs();
  const port = new FakeEnd();
  const clock = new ManualClock();
  const link = new SupervisorLink(port as unknown as IpcPort, logs.logger);
  const platform = platformTransportAt('http://127.0.0.1:9', { logger: logs.logger });
  const transport = new SupervisedTransport({ platform, link, logger: logs.logger, timeouts, clock });
  await turn();
  const controller = new AbortController();
  const taken = transport.take({ max: 1, inProgress: false, signal: controller.signal });
  await turn();
  port.emit('message', [{ k: 'jobs', text: '[{"id":"a","input":{},"attempt":1}]' }]);
  return { port, clock, transport, controller, taken };
}

/** Worker API calls whose takes a test answers by hand. */
function fakeCalls(answer: (body: string) => DirectAnswer | Error = () => ({ acknowledged: true, applied: true })) {
  const takes: Array<{ max: number; controller: AbortController; resolve: (jobs: Job[]) => void }> = [];
  const bodies: string[] = [];
  const stopWaits: Array<{ signal: AbortSignal; resolve: (batch: StopBatch | undefined) => void }> = [];
  const calls: WorkerApiCalls = {
    take: (_endpoint, _worker, max, controller) =>
      new Promise<Job[]>((resolve) => {
        takes.push({ max, controller, resolve });
        controller.signal.addEventListener('abort', () => resolve([]), { once: true });
      }),
    done: (_endpoint, _worker, _job, body) => {
      bodies.push(body);
      const outcome = answer(body);
      return outcome instanceof Error ? Promise.reject(outcome) : Promise.resolve(outcome);
    },
    stream: () => Promise.resolve({ acknowledged: true, applied: true }),
    ping: () => Promise.resolve(),
    stops: (_endpoint, _worker, signal) =>
      new Promise<StopBatch | undefined>((resolve) => {
        stopWaits.push({ signal, resolve });
        signal.addEventListener('abort', () => resolve(undefined), { once: true });
      }),
  };
  return { calls, takes, bodies, stopWaits };
}

const job = (id: string, attempt = 1): Job => ({ id, input: { n: id }, attempt });

/** The supervisor's end of a fake channel served with `calls` (and `clock`, default the system's). */
function servedChild(calls: WorkerApiCalls, clock?: ManualClock) {
  const logs = captureLogs();
  const child = new FakeEnd();
  serveChildChannel(child as unknown as ChildProcess, {
    calls,
    endpointId: 'local',
    workerId: 'w1',
    logger: logs.logger,
    ...(clock !== undefined ? { clock } : {}),
    onJobsAfterExit: () => undefined,
    pingIntervalMs: 10_000,
    onBlocked: () => undefined,
  });
  return { child, logs };
}

describe("the supervisor's end: jobs pushed against credits", () => {
  it('keeps one standing take for the free slots, pushes what it takes, and gets a slot back with each result or free', async () => {
    const clock = new ManualClock();
    const { calls, takes, bodies } = fakeCalls();
    const { child } = servedChild(calls, clock);
    // No take before the child says how many jobs it can hold.
    await settle();
    expect(takes).toHaveLength(0);
    child.emit('message', [{ k: 'credit', slots: 2 }]);
    expect(takes.map((take) => take.max)).toEqual([2]);
    takes[0]?.resolve([job('a'), job('b')]);
    await settle();
    // Both slots taken: no other take until one comes back.
    expect(child.sent).toEqual([[{ k: 'jobs', text: '[{"id":"a","input":{"n":"a"},"attempt":1},{"id":"b","input":{"n":"b"},"attempt":1}]' }]]);
    expect(takes).toHaveLength(1);
    // A result gives its slot back: a new take at once; its confirmation waits for a message to ride with.
    child.emit('message', [{ k: 'result', id: 0, job: 'a', attempt: 1, body: '{"output":1}' }]);
    expect(takes.map((take) => take.max)).toEqual([2, 1]);
    await settle();
    expect(bodies).toEqual(['{"output":1}']);
    expect(child.sent).toHaveLength(1);
    takes[1]?.resolve([job('c')]);
    await settle();
    expect(child.sent[1]).toEqual([
      { k: 'jobs', text: '[{"id":"c","input":{"n":"c"},"attempt":1}]' },
      { k: 'applied', ids: [0] },
    ]);
    // A run that ended without a result (cancelled) frees its slot; a result of a job not out (a repeat) frees none.
    child.emit('message', [{ k: 'free', job: 'b', attempt: 1 }]);
    expect(takes).toHaveLength(3);
    child.emit('message', [{ k: 'result', id: 1, job: 'a', attempt: 1, body: '{"output":1}' }]);
    expect(takes).toHaveLength(3);
    await settle();
    // Without another message to the child, the confirmation goes alone after ACK_DELAY_MS.
    expect(child.sent).toHaveLength(2);
    clock.advance(ACK_DELAY_MS);
    await settle();
    expect(child.sent[2]).toEqual([{ k: 'applied', ids: [1] }]);
    // Fewer slots: the standing take (for 1) is given up and made again for what is free (none: c is out).
    child.emit('message', [{ k: 'credit', slots: 1 }]);
    expect(takes[2]?.controller.signal.aborted).toBe(true);
    await settle();
    expect(takes).toHaveLength(3);
    child.emit('exit');
  });

  it('keeps one standing job-stop wait for the child, sends each batch of stops after the jobs pushed before it, and ends the wait when the child exits', async () => {
    const { calls, takes, stopWaits } = fakeCalls();
    const { child } = servedChild(calls);
    // One wait from the start, jobs out or not.
    expect(stopWaits).toHaveLength(1);
    child.emit('message', [{ k: 'credit', slots: 2 }]);
    takes[0]?.resolve([job('a', 2)]);
    // The stop comes in the same turn as the job: it goes after it, in the same message.
    stopWaits[0]?.resolve({ jobIds: ['a', 'b'], reasons: { a: 'timeout' }, attempts: { a: 2 } });
    await settle();
    expect(child.sent).toEqual([
      [
        { k: 'jobs', text: '[{"id":"a","input":{"n":"a"},"attempt":2}]' },
        {
          k: 'stops',
          stops: [
            { job: 'a', reason: 'timeout', attempt: 2 },
            // No reason given: a cancel, as the platform transport reads one.
            { job: 'b', reason: 'cancelled' },
          ],
        },
      ],
    ]);
    // Waiting again at once; the child's exit ends it and no other starts.
    expect(stopWaits).toHaveLength(2);
    expect(stopWaits[1]?.signal.aborted).toBe(false);
    child.emit('exit');
    expect(stopWaits[1]?.signal.aborted).toBe(true);
    await settle();
    expect(stopWaits).toHaveLength(2);
    expect(child.sent).toHaveLength(1);
  });

  it('answers a result that was not applied or was refused, and refuses a malformed request with what was wrong', async () => {
    const { calls, bodies } = fakeCalls((body) =>
      body === '{"output":"late"}' ? { acknowledged: true, applied: false, reason: 'already_ended' } : new Error('store down'),
    );
    const { child, logs } = servedChild(calls);
    child.emit('message', [
      { k: 'result', id: 3, job: 'job-1', body: 42 },
      { k: 'result', id: 4, job: 'job-1', body: '{"output":"late"}' },
      { k: 'result', id: 5, job: 'job-2', body: '{"output":"x"}' },
    ]);
    expect(logs.find('is not one of the channel protocol (message 0: body 42 is not a string (the JSON text of the post)); refused', 50)).toHaveLength(1);
    await settle();
    expect(bodies).toEqual(['{"output":"late"}', '{"output":"x"}']);
    expect(child.sent.flat()).toEqual([
      {
        k: 'error',
        id: 3,
        code: 'SW_CHANNEL_PROTOCOL',
        message: 'refused by the --serve-api process: message 0: body 42 is not a string (the JSON text of the post)',
        status: 400,
      },
      { k: 'answer', id: 4, answer: { acknowledged: true, applied: false, reason: 'already_ended' } },
      { k: 'error', id: 5, code: 'SW_INTERNAL', message: 'store down', status: 500 },
    ]);
    child.emit('exit');
  });
});
