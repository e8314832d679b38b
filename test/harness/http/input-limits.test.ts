/**
 * Bounded input (issue 24): a body nested deeper than the harness takes, or with too
 * many keys, is a 400 naming the limit and what was found, read from the text before
 * anything parses or copies it (it used to be a 500 at /run, or a job whose every take
 * answered 500 until SW_REQUEUE_LIMIT). A worker's post nested past the limit is a 400
 * and changes nothing. Queued request bytes are capped per harness (503 SW_QUEUE_FULL
 * with Retry-After). And the PostgreSQL store takes what JSON allows (NUL, lone
 * surrogates, the deepest input allowed) over HTTP, in and out.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH, MAX_JSON_KEYS } from '../../../src/job/index.js';
import { RAW_INPUT_MIN_CHARS } from '../../../packages/platform/src/harness/http/json-body.js';
import { PostgresJobStore } from '../../../packages/platform/src/harness/store/postgres/postgres-job-store.js';
import { createTestDatabase, type TestDatabase } from '../../postgres/test-database.js';
import { startTestWorker } from './helpers.js';
import { call, errorCode, startTestServer, type TestServer } from '../../kit/index.js';

/** `depth` nested arrays around 0, as JSON text. */
const deepText = (depth: number): string => `${'['.repeat(depth)}0${']'.repeat(depth)}`;
/** A /run body whose input (an object, as the schema wants) is `depth` levels deep. */
const deepBody = (depth: number): string => `{"input":{"a":${deepText(depth - 1)}}}`;

let server: TestServer | undefined;
let database: TestDatabase | undefined;
const stops: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
  await server?.close();
  server = undefined;
  await database?.drop();
  database = undefined;
});

describe('depth and key limits at submission', () => {
  it('takes input exactly MAX_JSON_DEPTH deep and runs it; one level more is 400 SW_INPUT_TOO_DEEP on /run and /runsync', async () => {
    server = await startTestServer();
    const url = server.endpointUrl();
    const accepted = await call('POST', `${url}/run`, { body: deepBody(MAX_JSON_DEPTH) });
    expect(accepted.status).toBe(200);
    for (const depth of [MAX_JSON_DEPTH + 1, 5_000, 100_000]) {
      for (const route of ['run', 'runsync']) {
        const refused = await call('POST', `${url}/${route}`, { body: deepBody(depth) });
        expect(refused.status, `${route} at ${depth}`).toBe(400);
        expect(errorCode(refused)).toBe('SW_INPUT_TOO_DEEP');
        expect(refused.json).toMatchObject({ error: { details: { maxDepth: MAX_JSON_DEPTH, foundDepthAtLeast: MAX_JSON_DEPTH + 1 } } });
        expect((refused.json as { error: { message: string } }).error.message).toContain(`at most ${MAX_JSON_DEPTH}`);
      }
    }
    // The accepted one runs: taken, echoed, answered by /status with the same bytes.
    const worker = startTestWorker(server.harness, ((job: { input: unknown }) => job.input) as never);
    stops.push(async () => {
      await worker.stop();
    });
    const { id } = accepted.json as { id: string };
    const done = await call('GET', `${url}/status-sync/${id}?wait=30000`);
    expect(done.status).toBe(200);
    expect(done.json).toMatchObject({ status: 'COMPLETED' });
    expect(done.text).toContain(`"output":{"a":${deepText(MAX_JSON_DEPTH - 1)}}`);
    expect(((await call('GET', `${url}/health`)).json as { jobs: { inQueue: number } }).jobs.inQueue).toBe(0);
  });

  it('refuses more than MAX_JSON_KEYS keys with 400 SW_INPUT_TOO_MANY_KEYS; brackets and colons inside strings do not count', async () => {
    server = await startTestServer();
    const url = server.endpointUrl();
    const keys = `{"input":{${'"k":0,'.repeat(MAX_JSON_KEYS)}"k":0}}`;
    const refused = await call('POST', `${url}/run`, { body: keys });
    expect(refused.status).toBe(400);
    expect(errorCode(refused)).toBe('SW_INPUT_TOO_MANY_KEYS');
    expect(refused.json).toMatchObject({ error: { details: { maxKeys: MAX_JSON_KEYS } } });
    // Text that looks deep or keyed is just text.
    const text = await call('POST', `${url}/run`, { body: { input: { s: `${'[{:'.repeat(5_000)}\\"[` } } });
    expect(text.status).toBe(200);
  });

  it('the OpenAI route refuses a body nested past the limit the same way, before any job exists', async () => {
    server = await startTestServer();
    const url = server.endpointUrl();
    const body = `{"model":"m","messages":[{"role":"user","content":"hi"}],"extra":${deepText(MAX_JSON_DEPTH + 5)}}`;
    const refused = await call('POST', `${url}/openai/v1/chat/completions`, { body });
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('SW_INPUT_TOO_DEEP');
    expect((await server.harness.endpoint('ep').health()).jobs.inQueue).toBe(0);
  });

  it('a worker result nested past the limit is 400 and ends the job FAILED with the reason (it cannot be stored); a too-deep progress post leaves it running', async () => {
    server = await startTestServer();
    const url = server.endpointUrl();
    const { id } = (await call('POST', `${url}/run`, { body: { input: {} } })).json as { id: string };
    const taken = await call('GET', `${url}/job-take/w1`);
    expect(taken.status).toBe(200);
    const deepProgress = await call('POST', `${url}/job-done/w1/${id}`, { body: `{"status":"IN_PROGRESS","output":${deepText(3_500)}}` });
    expect(deepProgress.status).toBe(400);
    expect((await call('GET', `${url}/status/${id}`)).json).toMatchObject({ status: 'IN_PROGRESS' });
    const deep = await call('POST', `${url}/job-done/w1/${id}`, { body: `{"output":${deepText(3_500)}}` });
    expect(deep.status).toBe(400);
    expect(errorCode(deep)).toBe('SW_INVALID_REQUEST');
    expect(deep.json).toMatchObject({ error: { details: { maxDepth: MAX_JSON_DEPTH, jobFailed: true } } });
    const failed = (await call('GET', `${url}/status/${id}`)).json as { status: string; error: unknown };
    expect(failed.status).toBe('FAILED');
    expect(JSON.stringify(failed.error)).toContain(`more than ${MAX_JSON_DEPTH + 1} levels deep`);
    // The worker's later error post (ours sends one in its place) finds the job ended.
    expect((await call('POST', `${url}/job-done/w1/${id}`, { body: { error: 'too deep' } })).status).toBe(200);
    expect((await call('GET', `${url}/status/${id}`)).json).toMatchObject({ status: 'FAILED' });
  });
});

describe('large bodies: checked off the event loop, input queued as the text received', () => {
  /** An input object of at least `chars` characters as JSON (keys "k0".."kN" of 7 to 11 characters each). */
  const bigInput = (chars: number): Record<string, number> => Object.fromEntries(Array.from({ length: Math.ceil(chars / 6) }, (_, i) => [`k${i}`, i % 10]));

  it('a body past RAW_INPUT_MIN_CHARS runs with its input exactly as sent: over the worker API, in process, on /run and /runsync', async () => {
    server = await startTestServer();
    const url = server.endpointUrl();
    // Over the worker API: the take answer carries the input's text as received.
    const sent = `{"input":{"text":"a\\u0000b\\ud800","n":[1,2.50,-0],"pad":${JSON.stringify(bigInput(RAW_INPUT_MIN_CHARS * 2))}},"policy":{"ttl":60000}}`;
    expect((await call('POST', `${url}/run`, { body: sent })).status).toBe(200);
    const taken = await call('GET', `${url}/job-take/w1`);
    expect(taken.text).toContain('"input":{"text":"a\\u0000b\\ud800","n":[1,2.50,-0],"pad":');
    expect((taken.json as { input: unknown }).input).toEqual((JSON.parse(sent) as { input: unknown }).input);
    expect(taken.json).toMatchObject({ policy: { ttl: 60000 }, attempt: 1 });
    const batch = await call('POST', `${url}/run`, { body: sent });
    const takenBatch = await call('GET', `${url}/job-take-batch/w1?batch_size=5`);
    expect((takenBatch.json as { id: string }[]).map((job) => job.id)).toEqual([(batch.json as { id: string }).id]);
    const worker = startTestWorker(server.harness, ((job: { input: unknown }) => job.input) as never);
    stops.push(async () => {
      await worker.stop();
    });
    const input = { ...bigInput(RAW_INPUT_MIN_CHARS + 10_000), nul: 'a\u0000b', lone: '\ud800' };
    // Spaces around the input, and a field before it: the span is found wherever it lies.
    const body = `{ "policy": {"ttl": 60000}, "input" : ${JSON.stringify(input)} }`;
    const submitted = await call('POST', `${url}/run`, { body });
    expect(submitted.status, submitted.text).toBe(200);
    const { id } = submitted.json as { id: string };
    const done = await call('GET', `${url}/status-sync/${id}?wait=30000`);
    expect(done.json).toMatchObject({ status: 'COMPLETED' });
    expect(JSON.stringify((done.json as { output: unknown }).output)).toBe(JSON.stringify(input));
    const sync = await call('POST', `${url}/runsync`, { body: { input } });
    expect(JSON.stringify((sync.json as { output: unknown }).output)).toBe(JSON.stringify(input));
  });

  it('refuses a large body that is not JSON, too deep, an input that is not an object, a bad policy, a poisoned key', async () => {
    server = await startTestServer();
    const url = server.endpointUrl();
    const pad = JSON.stringify(bigInput(RAW_INPUT_MIN_CHARS));
    const cases: [string, number, string][] = [
      [`{"input":${pad.slice(0, -1)}`, 400, 'SW_INVALID_REQUEST'],
      [`{"input":{"pad":${pad},"deep":${deepText(MAX_JSON_DEPTH + 5)}}}`, 400, 'SW_INPUT_TOO_DEEP'],
      [`{"input":[${pad}]}`, 400, 'SW_INVALID_JOB_REQUEST'],
      [`{"input":${pad},"policy":{"ttl":1}}`, 400, 'SW_INVALID_JOB_REQUEST'],
      [`{"input":{"pad":${pad},"__proto__":{"x":1}}}`, 400, 'SW_INVALID_REQUEST'],
    ];
    for (const [body, status, code] of cases) {
      const answer = await call('POST', `${url}/run`, { body });
      expect([answer.status, errorCode(answer)], body.slice(-40)).toEqual([status, code]);
    }
    // An escaped "input" key is the same key to JSON: the last one counts, as JSON.parse says.
    const escaped = await call('POST', `${url}/run`, { body: `{"input":${pad},"\\u0069nput":{"small":true}}` });
    expect(escaped.status).toBe(200);
    const taken = await call('GET', `${url}/job-take/w1`);
    expect((taken.json as { input: unknown }).input).toEqual({ small: true });
  });
});

describe('queued bytes cap', () => {
  it('answers 503 SW_QUEUE_FULL with Retry-After once queued bodies hold maxQueuedBytes, and takes again when a worker frees room', async () => {
    server = await startTestServer({}, { maxQueuedBytes: 1_000 });
    const url = server.endpointUrl();
    const body = JSON.stringify({ input: { pad: 'x'.repeat(400) } });
    expect((await call('POST', `${url}/run`, { body })).status).toBe(200);
    expect((await call('POST', `${url}/run`, { body })).status).toBe(200);
    const full = await call('POST', `${url}/runsync`, { body });
    expect(full.status).toBe(503);
    expect(errorCode(full)).toBe('SW_QUEUE_FULL');
    expect(full.headers.get('retry-after')).toBe('5');
    expect(full.json).toMatchObject({ error: { details: { maxQueuedBytes: 1_000, queuedBytes: 2 * body.length, requestBytes: body.length } } });
    // A worker takes one: room for one more.
    expect((await call('GET', `${url}/job-take/w1`)).status).toBe(200);
    expect((await call('POST', `${url}/run`, { body })).status).toBe(200);
    expect((await call('POST', `${url}/run`, { body })).status).toBe(503);
    // Cancel and purge free room too.
    expect((await call('POST', `${url}/purge-queue`)).status).toBe(200);
    expect((await call('POST', `${url}/run`, { body })).status).toBe(200);
  });
});

describe('PostgreSQL over HTTP: every JSON value in and out', () => {
  it('takes input with NUL and lone surrogates at /run, hands it to a worker as sent, and keeps an output with them', async () => {
    database = await createTestDatabase();
    const store = await PostgresJobStore.open(await database.connect());
    server = await startTestServer({}, { store });
    const url = server.endpointUrl();
    // As raw text: the escapes exactly as a client sends them.
    const input = '{"nul":"a\\u0000b","high":"\\ud800","low":"x\\udc00y","pair":"\\ud83d\\ude00","deep":' + deepText(MAX_JSON_DEPTH - 1) + '}';
    const submitted = await call('POST', `${url}/run`, { body: `{"input":${input}}` });
    expect(submitted.status).toBe(200);
    const { id } = submitted.json as { id: string };
    const taken = await call('GET', `${url}/job-take/w1`);
    expect(taken.status).toBe(200);
    expect(JSON.stringify((taken.json as { input: unknown }).input)).toBe(JSON.stringify(JSON.parse(input)));
    const output = `${input.slice(0, -1)},"only":"\\u0000"}`;
    const posted = await call('POST', `${url}/job-done/w1/${id}`, { body: `{"output":${output}}` });
    expect(posted.status).toBe(200);
    const status = await call('GET', `${url}/status/${id}`);
    expect(status.status).toBe(200);
    expect(status.json).toMatchObject({ status: 'COMPLETED' });
    expect(JSON.stringify((status.json as { output: unknown }).output)).toBe(JSON.stringify(JSON.parse(output)));
  });
});
