/**
 * The IPC channel between `--serve-api` and its worker child (channel-protocol.ts): its
 * messages are checked by hand rather than by zod (issue 34, CPU per job). A well-formed
 * batch passes as it is; a malformed one is refused with what was wrong, and both ends
 * log it and go on: the child's link answers the next good message, the supervisor's
 * channel serves the next request.
 */
import { EventEmitter } from 'node:events';
import type { ChildProcess } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { readChildBatch, readSupervisorBatch } from '../../src/transports/supervised/channel-protocol.js';
import { SupervisorLink, type IpcPort } from '../../src/transports/supervised/supervisor-link.js';
import { serveChildChannel } from '../../packages/platform/src/local/child-channel.js';
import type { WorkerApiCalls } from '../../packages/platform/src/harness/worker-api/index.js';
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

describe('the channel messages, checked by hand', () => {
  it('passes well-formed batches as they are', () => {
    const child = [
      { k: 'take', id: 0, max: 8 },
      { k: 'cancel', id: 0 },
      { k: 'done', id: 1, job: 'j1', attempt: 2, body: '{"output":1}' },
      { k: 'stream', id: 2, job: 'j1', body: '{"output":"a"}' },
    ];
    expect(readChildBatch(child)).toEqual({ ok: true, batch: child });
    const supervisor = [
      { k: 'jobs', id: 0, text: '[]' },
      { k: 'answer', id: 1, answer: { applied: true } },
      { k: 'error', id: 2, code: 'SW_STALE_ATTEMPT', message: 'stale', status: 409 },
    ];
    expect(readSupervisorBatch(supervisor)).toEqual({ ok: true, batch: supervisor });
  });

  it.each([
    [{ k: 'take', id: 0, max: 8 }, 'expected a non-empty array of messages, got {"k":"take","id":0,"max":8}'],
    [[], 'expected a non-empty array of messages, got []'],
    [['take'], 'message 0: not an object: "take"'],
    [[{ k: 'take', id: -1, max: 1 }], 'message 0: id -1 is not an integer >= 0'],
    [[{ k: 'take', id: 0, max: 1025 }], 'message 0: max 1025 is not an integer from 1 to 1024'],
    [
      [
        { k: 'cancel', id: 1 },
        { k: 'done', id: 1, job: '', body: '{}' },
      ],
      'message 1: job "" is not a job id (a non-empty string)',
    ],
    [[{ k: 'done', id: 1, job: 'j', attempt: 0, body: '{}' }], 'message 0: attempt 0 is not an integer >= 1'],
    [[{ k: 'stream', id: 1, job: 'j', body: { output: 1 } }], 'message 0: body {"output":1} is not a string (the JSON text of the post)'],
    [[{ k: 'jobs', id: 1 }], 'message 0: k "jobs" is not one of "take", "cancel", "done", "stream"'],
  ])('refuses a malformed batch from the child, saying what is wrong: %j', (message, problem) => {
    expect(readChildBatch(message)).toEqual({ ok: false, problem });
  });

  it.each([
    [[{ k: 'jobs', id: 0, text: [] }], 'message 0: text [] is not a string (a JSON array of jobs)'],
    [[{ k: 'answer', id: 0, answer: [1] }], 'message 0: answer [1] is not an object'],
    [[{ k: 'error', id: 0, code: 'X', message: 'm', status: 1.5 }], 'message 0: status 1.5 is not an integer'],
    [[{ k: 'take', id: 0, max: 1 }], 'message 0: k "take" is not one of "jobs", "answer", "error"'],
  ])('refuses a malformed batch from the supervisor, saying what is wrong: %j', (message, problem) => {
    expect(readSupervisorBatch(message)).toEqual({ ok: false, problem });
  });
});

describe('a malformed message on the channel', () => {
  it('the child logs it and answers the next good message', async () => {
    const logs = captureLogs();
    const port = new FakeEnd();
    const link = new SupervisorLink(port as unknown as IpcPort, logs.logger);
    const posted = link.post('done', 'job-1', 1, '{"output":1}');
    await turn();
    expect(port.sent).toEqual([[{ k: 'done', id: 0, job: 'job-1', attempt: 1, body: '{"output":1}' }]]);
    port.emit('message', [{ k: 'answer', id: 0, answer: 'yes' }]);
    expect(logs.find('is not one of the channel protocol (message 0: answer "yes" is not an object); ignored', 50)).toHaveLength(1);
    port.emit('message', [{ k: 'answer', id: 0, answer: { applied: true } }]);
    expect(await posted).toEqual({ ok: true, answer: { applied: true } });
    link.close();
  });

  it('the supervisor logs it and serves the next good request', async () => {
    const logs = captureLogs();
    const child = new FakeEnd();
    const bodies: string[] = [];
    const calls: WorkerApiCalls = {
      take: () => Promise.resolve([]),
      done: (_endpoint, _worker, _job, body) => {
        bodies.push(body);
        return Promise.resolve({ applied: true });
      },
      stream: () => Promise.resolve({}),
    };
    serveChildChannel(child as unknown as ChildProcess, { calls, endpointId: 'local', workerId: 'w1', logger: logs.logger, onJobsAfterExit: () => undefined });
    child.emit('message', [{ k: 'done', id: 3, job: 'job-1', body: 42 }]);
    expect(logs.find('is not one of the channel protocol (message 0: body 42 is not a string (the JSON text of the post)); ignored', 50)).toHaveLength(1);
    child.emit('message', [{ k: 'done', id: 4, job: 'job-1', body: '{"output":1}' }]);
    await turn();
    await turn();
    expect(bodies).toEqual(['{"output":1}']);
    expect(child.sent).toEqual([[{ k: 'answer', id: 4, answer: { applied: true } }]]);
    child.emit('exit');
  });
});
