/**
 * The dashboard's server-side parts without a server: the attempt log (what each event
 * does to a job's attempts, and its caps), the attempt view (the current attempt of an
 * in-process worker, a requeue explained by the launcher's exit event), the launcher's
 * scale event ring, and examples made from input schemas.
 */
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { Harness, ManualClock } from '../../../src/harness/index.js';
import { toDocumentSchema } from '../../../packages/platform/src/harness/openapi/index.js';
import { AttemptLog, inputExample, jobAttemptsView, type JobAttemptFacts } from '../../../packages/platform/src/harness/dashboard/index.js';
import { ScaleEvents } from '../../../packages/platform/src/harness/launcher/index.js';

/** A job as the log reads it. */
const facts = (fields: Partial<JobAttemptFacts> & Pick<JobAttemptFacts, 'id' | 'status'>): JobAttemptFacts => ({
  endpointId: 'ep',
  attempt: 1,
  retries: 0,
  lost: 0,
  ...fields,
});

describe('attempt log', () => {
  it('records takes, a requeue with its reason, a stale post, a retake and the end', () => {
    let now = 1_000;
    const log = new AttemptLog({}, () => now);
    log.taken('ep', 'w-a', [{ id: 'j1', attempt: 1 }]);
    now = 2_000;
    log.requeued('ep', 'w-a', ['j1'], 'requeued: its worker was declared gone (no heartbeat)');
    now = 3_000;
    log.taken('ep', 'w-b', [{ id: 'j1', attempt: 2 }]);
    now = 3_500;
    log.stalePost('ep', 'w-a', 'j1', 1, 'result');
    log.ended(
      facts({ id: 'j1', status: 'COMPLETED', attempt: 2, retries: 1, lost: 1, startedAt: 3_000, endedAt: 4_000, resultFrom: { workerId: 'w-b', attempt: 2 } }),
    );
    expect(log.forJob('ep', 'j1')?.attempts).toEqual([
      {
        attempt: 1,
        workerId: 'w-a',
        startedAt: 1_000,
        endedAt: 2_000,
        outcome: 'requeued',
        reason: 'requeued: its worker was declared gone (no heartbeat)',
        stalePosts: 1,
        lastStalePost: { at: 3_500, what: 'result', workerId: 'w-a' },
      },
      { attempt: 2, workerId: 'w-b', startedAt: 3_000, endedAt: 4_000, outcome: 'COMPLETED', stalePosts: 0 },
    ]);
  });

  it('closes an attempt left open as requeued when the next one is taken, and records ends of jobs it never saw taken', () => {
    const log = new AttemptLog({}, () => 5_000);
    log.taken('ep', 'w-a', [{ id: 'j1', attempt: 1 }]);
    log.taken('ep', 'w-b', [{ id: 'j1', attempt: 2 }]);
    expect(log.forJob('ep', 'j1')?.attempts.map((a) => [a.attempt, a.outcome, a.reason])).toEqual([
      [1, 'requeued', 'requeued: its worker was lost'],
      [2, 'running', undefined],
    ]);
    const error = { error_type: 'ValueError', error_message: 'bad', hostname: 'h', worker_id: 'in-process', runtime_version: '1' };
    log.ended(facts({ id: 'j2', status: 'FAILED', startedAt: 10, endedAt: 20, error }));
    log.ended(facts({ id: 'j3', status: 'CANCELLED', attempt: 0 }));
    expect(log.forJob('ep', 'j2')?.attempts).toEqual([
      { attempt: 1, workerId: 'in-process', startedAt: 10, endedAt: 20, outcome: 'FAILED', reason: 'ValueError: bad', stalePosts: 0 },
    ]);
    // A job cancelled in the queue, never taken, leaves no record.
    expect(log.forJob('ep', 'j3')).toBeUndefined();
  });

  it('keeps no record of a plain end (completed on its only attempt): the view reads that attempt from the job', async () => {
    const clock = new ManualClock(1_000);
    const harness = new Harness({ clock });
    const endpoint = harness.endpoint('ep');
    const log = new AttemptLog({}, () => clock.now());
    endpoint.jobEnded.add((job) => log.ended(job));
    const { id } = await endpoint.submit({ input: {} });
    const [taken] = await endpoint.tryTake('w-a', 1);
    log.taken('ep', 'w-a', [{ id, attempt: taken?.attempt }]);
    expect(log.size).toBe(1);
    clock.advance(40);
    await endpoint.complete(id, 'w-a', { kind: 'output', output: 1 }, 1);
    expect(log.size).toBe(0);
    const job = await endpoint.find(id);
    if (!job) throw new Error('job gone');
    const view = jobAttemptsView(job, log.forJob('ep', id), [], clock.now());
    expect(view.attempts).toEqual([
      {
        attempt: 1,
        workerId: 'w-a',
        startedAt: new Date(1_000).toISOString(),
        endedAt: new Date(1_040).toISOString(),
        durationMs: 40,
        outcome: 'COMPLETED',
        stalePosts: 0,
      },
    ]);
    await harness.close();
  });

  it('keeps at most maxJobs jobs (the first recorded goes) and maxAttemptsPerJob attempts each (counting those dropped)', () => {
    const log = new AttemptLog({ maxJobs: 3, maxAttemptsPerJob: 2 }, () => 0);
    for (const id of ['a', 'b', 'c', 'd']) log.taken('ep', 'w', [{ id, attempt: 1 }]);
    expect(log.size).toBe(3);
    expect(log.forJob('ep', 'a')).toBeUndefined();
    for (let attempt = 2; attempt <= 5; attempt++) log.taken('ep', 'w', [{ id: 'd', attempt }]);
    const d = log.forJob('ep', 'd');
    expect(d?.attempts.map((a) => a.attempt)).toEqual([4, 5]);
    expect(d?.dropped).toBe(3);
    expect(log.limits).toEqual({ maxJobs: 3, maxAttemptsPerJob: 2 });
  });
});

describe('attempt view', () => {
  it("adds an in-process worker's running attempt and explains a requeue by the launcher's exit event", async () => {
    const clock = new ManualClock(10_000);
    const harness = new Harness({ clock });
    const endpoint = harness.endpoint('ep');
    const { id } = await endpoint.submit({ input: {} });
    await endpoint.tryTake('ep-1', 1);
    const log = new AttemptLog({}, () => clock.now());
    log.taken('ep', 'ep-1', [{ id, attempt: 1 }]);
    await endpoint.requeueWorkerJobs('ep-1');
    clock.advance(500);
    await endpoint.tryTake('in-process', 1);
    clock.advance(250);
    const events = new ScaleEvents();
    events.add({
      at: 10_100,
      endpointId: 'ep',
      kind: 'crash',
      workerId: 'ep-1',
      message: 'crashed while running (code 1, signal null)',
      workers: 0,
      requeued: [id],
    });
    const job = await endpoint.find(id);
    if (!job) throw new Error('job gone');
    const view = jobAttemptsView(job, log.forJob('ep', id), events.read('ep'), clock.now(), log.limits);
    expect(view).toMatchObject({ attempt: 2, retries: 1, lost: 1, status: 'IN_PROGRESS', dropped: 0 });
    expect(view.attempts).toEqual([
      {
        attempt: 1,
        workerId: 'ep-1',
        startedAt: new Date(10_000).toISOString(),
        endedAt: new Date(10_100).toISOString(),
        durationMs: 100,
        outcome: 'requeued',
        reason: 'requeued: its worker crashed while running (code 1, signal null)',
        stalePosts: 0,
      },
      { attempt: 2, workerId: 'in-process', startedAt: new Date(10_500).toISOString(), durationMs: 250, outcome: 'running', stalePosts: 0 },
    ]);
    await harness.close();
  });
});

describe('scale events', () => {
  it('keeps the last events per endpoint, numbered across endpoints, read per endpoint or merged', () => {
    const ring = new ScaleEvents(2);
    for (let i = 0; i < 3; i++) ring.add({ at: i, endpointId: 'a', kind: 'scale-up', workerId: `a-${i}`, message: 'started', workers: i + 1 });
    ring.add({ at: 9, endpointId: 'b', kind: 'crash', workerId: 'b-1', message: 'crashed', workers: 0, nextStartInMs: 1_000 });
    expect(ring.seq).toBe(4);
    expect(ring.read('a').map((e) => e.workerId)).toEqual(['a-1', 'a-2']);
    expect(ring.read(undefined, 10).map((e) => e.seq)).toEqual([2, 3, 4]);
    expect(ring.read().map((e) => e.seq)).toEqual([3, 4]);
    expect(ring.read(undefined, 1)).toEqual([
      { seq: 4, at: 9, endpointId: 'b', kind: 'crash', workerId: 'b-1', message: 'crashed', workers: 0, nextStartInMs: 1_000 },
    ]);
    expect(ring.read('none')).toEqual([]);
  });
});

describe('input examples', () => {
  it('makes a valid example from a zod input schema: required fields, defaults, enums, bounds, nested objects, refs', () => {
    const Point = z.object({ x: z.number().min(-5), y: z.number() });
    const schema = z.object({
      prompt: z.string().min(10),
      steps: z.number().int().min(1).max(50).default(20),
      mode: z.enum(['fast', 'slow']),
      email: z.email(),
      tags: z.array(z.string()).min(2),
      start: Point,
      end: Point,
      seed: z.number().int().optional(),
      ratio: z.number().gt(0).lt(1),
      style: z.union([z.literal('a'), z.literal('b')]).nullable(),
      flags: z.object({ hd: z.boolean() }),
    });
    const example = inputExample(toDocumentSchema(schema));
    expect(schema.safeParse(example).success).toBe(true);
    expect(example).toMatchObject({
      prompt: 'example prompt',
      steps: 20,
      mode: 'fast',
      email: 'user@example.com',
      tags: ['example text', 'example text'],
      start: { x: -5, y: 0 },
    });
    expect(example).not.toHaveProperty('seed');
  });

  it('takes examples[0] first, follows $ref into $defs, and stops at a depth of 8', () => {
    expect(inputExample({ type: 'object', properties: { a: { type: 'string', examples: ['hi'] } } })).toEqual({ a: 'hi' });
    expect(inputExample({ $defs: { N: { type: 'integer', minimum: 3 } }, type: 'object', required: ['n'], properties: { n: { $ref: '#/$defs/N' } } })).toEqual({
      n: 3,
    });
    const loop = { $defs: { Node: { type: 'object', required: ['next'], properties: { next: { $ref: '#/$defs/Node' } } } }, $ref: '#/$defs/Node' };
    let depth = 0;
    let node: unknown = inputExample(loop);
    while (typeof node === 'object' && node !== null && 'next' in node) {
      node = (node as { next: unknown }).next;
      depth++;
    }
    expect(node).toBeNull();
    expect(depth).toBeLessThanOrEqual(8);
  });
});
