/**
 * Two attempts of one job on one worker (issue 13): attempt 1 still in a handler that
 * ignored its abort, attempt 2 taken after a retry. The platform transport keeps their
 * progress lanes apart (keyed by job id and attempt): one attempt's progress never
 * replaces the other's waiting value, and one attempt's result drops only its own.
 * Against a scripted server on 127.0.0.1 that holds chosen progress posts until the
 * test lets them go.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createPlatformTransport, type PlatformTransport } from '../../../src/transports/platform/index.js';
import { ProgressLanes } from '../../../src/transports/platform/progress-lanes.js';
import { waitFor, within } from '../../kit/index.js';
import { captureLogs } from './log-capture.js';
import { json, startScriptedServer, type ScriptedServer } from './scripted-server.js';

let server: ScriptedServer | undefined;
let transport: PlatformTransport | undefined;

afterEach(async () => {
  await transport?.close();
  transport = undefined;
  await server?.close();
  server = undefined;
});

interface Progress {
  value: unknown;
  attempt: string | null;
}

/** A transport against a server that holds the progress posts whose value is in `held` until `release()`. */
async function setup(held: readonly string[]) {
  let release: () => void = () => {};
  const gate = new Promise<void>((resolve) => (release = resolve));
  server = await startScriptedServer(async (request) => {
    if (request.path.includes('/job-done/')) {
      const body = JSON.parse(request.body) as { status?: string; output?: unknown };
      if (body.status === 'IN_PROGRESS' && typeof body.output === 'string' && held.includes(body.output)) await gate;
      return json({ acknowledged: true, applied: true });
    }
    return { status: 204, delayMs: 100 };
  });
  const origin = server.origin;
  transport = createPlatformTransport({
    processEnv: {
      RUNPOD_WEBHOOK_GET_JOB: `${origin}/v2/ep/job-take/$ID?`,
      RUNPOD_WEBHOOK_POST_OUTPUT: `${origin}/v2/ep/job-done/$RUNPOD_POD_ID/$ID?`,
      RUNPOD_WEBHOOK_POST_STREAM: `${origin}/v2/ep/job-stream/$RUNPOD_POD_ID/$ID?`,
      RUNPOD_POD_ID: 'w1',
    },
    logger: captureLogs().logger,
    heartbeat: false,
  });
  const seen = (): Progress[] =>
    (server as ScriptedServer)
      .to('/job-done/')
      .map((request) => ({ body: JSON.parse(request.body) as { status?: string; output?: unknown }, attempt: request.query.get('attempt') }))
      .filter(({ body }) => body.status === 'IN_PROGRESS')
      .map(({ body, attempt }) => ({ value: body.output, attempt }));
  const arrived = (value: string) => waitFor(() => seen().some((progress) => progress.value === value), `progress ${value} to reach the server`);
  return { transport, release, seen, arrived };
}

describe('two attempts of one job on one worker: progress lanes', () => {
  it("attempt 2's progress is posted while attempt 1's is in flight, and attempt 1's next value does not replace it", async () => {
    const { transport, release, seen, arrived } = await setup(['a1-first']);
    const first = transport.postProgress('j1', 'a1-first', 1);
    await arrived('a1-first');
    // Its own lane: posted at once, not queued behind attempt 1's post in flight.
    await within(transport.postProgress('j1', 'a2-first', 2), "attempt 2's progress while attempt 1's is held");
    // Attempt 1's next value waits in attempt 1's lane only.
    const second = transport.postProgress('j1', 'a1-second', 1);
    release();
    await within(Promise.all([first, second]), "attempt 1's posts");
    expect(seen()).toEqual([
      { value: 'a1-first', attempt: '1' },
      { value: 'a2-first', attempt: '2' },
      { value: 'a1-second', attempt: '1' },
    ]);
  });

  it("attempt 1's result leaves attempt 2's lane alone; attempt 2's result drops the value waiting in its own", async () => {
    const { transport, release, seen, arrived } = await setup(['a2-held']);
    const held = transport.postProgress('j1', 'a2-held', 2);
    await arrived('a2-held');
    const replaced = transport.postProgress('j1', 'a2-replaced', 2);
    // Attempt 1 ends while attempt 2 runs: its result must not reset attempt 2's lane.
    expect(await transport.postResult('j1', { kind: 'output', output: 'from 1' }, { isStream: false, stopPod: false, attempt: 1 })).toEqual({ applied: true });
    // Still one lane for attempt 2: this value replaces the waiting one and waits behind the held post
    // (on a lane of its own it would be on its way now).
    const latest = transport.postProgress('j1', 'a2-latest', 2);
    await new Promise((resolve) => setImmediate(resolve));
    // Attempt 2's result drops the value still waiting in its lane.
    await transport.postResult('j1', { kind: 'output', output: 'from 2' }, { isStream: false, stopPod: false, attempt: 2 });
    release();
    await within(Promise.all([held, replaced, latest]), "attempt 2's progress posts");
    expect(seen()).toEqual([{ value: 'a2-held', attempt: '2' }]);
  });
});

describe('ProgressLanes', () => {
  it('keeps nothing once a lane is idle, so runs that end without a result leave no lane behind', async () => {
    const lanes = new ProgressLanes();
    const sent: string[] = [];
    await Promise.all([
      lanes.post('a', async () => void sent.push('a1')),
      lanes.post('b', async () => void sent.push('b1')),
      lanes.post('a', async () => void sent.push('a2')),
    ]);
    // a2 came before a1 had started: it replaced it; lane b is its own.
    expect(sent).toEqual(['b1', 'a2']);
    await waitFor(() => lanes.size === 0, 'the idle lanes to go');
    expect(lanes.size).toBe(0);
  });
});
