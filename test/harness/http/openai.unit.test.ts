/**
 * OpenAI-compatible routes: the official `openai` client, unchanged, against the
 * harness with the example worker (plain and streaming chat completions, completions
 * passed through as SSE lines, models); the job input shape; failures as OpenAI
 * errors with non-2xx statuses; and errors mid-stream.
 */
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { OpenAiJobInput, openAiHandler } from '../../../examples/openai/handler.js';
import { ManualClock } from '../../../src/harness/index.js';
import { startTestWorker } from './helpers.js';
import { call, errorCode, startTestServer, type TestServer, waitFor } from '../../kit/index.js';

let running: TestServer | undefined;
let stopWorker: (() => Promise<void>) | undefined;

afterEach(async () => {
  await stopWorker?.();
  await running?.close();
  running = undefined;
  stopWorker = undefined;
});

const KEY = 'openai-test-key';

async function withExampleWorker(): Promise<OpenAI> {
  running = await startTestServer({ apiKey: KEY });
  stopWorker = startTestWorker(running.harness, openAiHandler as never, { inputSchema: OpenAiJobInput }).stop;
  return new OpenAI({ apiKey: KEY, baseURL: `${running.endpointUrl()}/openai/v1`, maxRetries: 0 });
}

describe('the official openai client against the harness', () => {
  it('plain chat completion', async () => {
    const client = await withExampleWorker();
    const completion = await client.chat.completions.create({
      model: 'reverse-words-1',
      messages: [{ role: 'user', content: 'the quick brown fox' }],
    });
    expect(completion.object).toBe('chat.completion');
    expect(completion.choices[0]?.message.content).toBe('fox brown quick the');
    expect(completion.choices[0]?.finish_reason).toBe('stop');
    expect(completion.usage).toEqual({ prompt_tokens: 4, completion_tokens: 4, total_tokens: 8 });
  });

  it('streaming chat completion', async () => {
    const client = await withExampleWorker();
    const stream = await client.chat.completions.create({
      model: 'reverse-words-1',
      messages: [{ role: 'user', content: 'one two three' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const deltas: string[] = [];
    let finish: string | null | undefined;
    let usage: unknown;
    for await (const chunk of stream) {
      expect(chunk.object).toBe('chat.completion.chunk');
      const choice = chunk.choices[0];
      if (choice?.delta.content) deltas.push(choice.delta.content);
      if (choice?.finish_reason) finish = choice.finish_reason;
      if (chunk.usage) usage = chunk.usage;
    }
    expect(deltas.join('')).toBe('three two one');
    expect(finish).toBe('stop');
    expect(usage).toEqual({ prompt_tokens: 3, completion_tokens: 3, total_tokens: 6 });
  });

  it("completions, plain and streamed as the worker's own SSE lines", async () => {
    const client = await withExampleWorker();
    const plain = await client.completions.create({ model: 'reverse-words-1', prompt: 'a b c', max_tokens: 2 });
    expect(plain.choices[0]).toMatchObject({ text: 'c b', finish_reason: 'length' });
    const stream = await client.completions.create({ model: 'reverse-words-1', prompt: 'a b c', stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.text ?? '';
    expect(text).toBe('c b a');
  });

  it('models', async () => {
    const client = await withExampleWorker();
    const models = [];
    for await (const model of client.models.list()) models.push(model.id);
    expect(models).toEqual(['reverse-words-1']);
  });

  it('a failed job is an APIError with a non-2xx status and our code', async () => {
    const client = await withExampleWorker();
    const error = await client.chat.completions.create({ model: 'm', messages: [] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
    expect((error as InstanceType<typeof OpenAI.APIError>).code).toBe('SW_OPENAI_JOB_FAILED');
    expect((error as Error).message).toContain('messages');
  });
});

describe('the OpenAI adapter', () => {
  it('makes a job with input {openai_route, openai_input} and answers its output as JSON', async () => {
    running = await startTestServer();
    stopWorker = startTestWorker(running.harness, async (job: { input: unknown }) => ({ seen: job.input })).stop;
    const body = { model: 'x', input: 'hi' };
    const answer = await call('POST', `${running.endpointUrl()}/openai/v1/embeddings`, { body });
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual({ seen: { openai_route: '/v1/embeddings', openai_input: body } });
    const jobId = answer.headers.get('x-request-id');
    expect(jobId).toMatch(/^sync-/);
  });

  it("answers a generator handler's aggregated [answer] as the answer itself", async () => {
    running = await startTestServer();
    stopWorker = startTestWorker(
      running.harness,
      async function* () {
        yield { object: 'chat.completion' };
      },
      { aggregateStream: true },
    ).stop;
    const answer = await call('POST', `${running.endpointUrl()}/openai/v1/chat/completions`, { body: { messages: [] } });
    expect(answer.json).toEqual({ object: 'chat.completion' });
  });

  it('FAILED: 502 in OpenAI error shape with the worker error in details; TIMED_OUT: 504', async () => {
    const clock = new ManualClock();
    running = await startTestServer({}, { clock });
    const endpoint = running.harness.endpoint('ep');
    const url = `${running.endpointUrl()}/openai/v1/chat/completions`;
    const failing = call('POST', url, { body: {} });
    await waitFor(async () => (await endpoint.jobs()).length === 1, 'the job');
    const [failed] = await endpoint.tryTake('w', 1);
    await endpoint.complete(failed!.id, 'w', {
      kind: 'error',
      error: { error_type: 'ValueError', error_message: 'bad prompt', hostname: 'h', worker_id: 'w', runtime_version: '0' },
    });
    const answer = await failing;
    expect(answer.status).toBe(502);
    expect(answer.json).toMatchObject({
      error: {
        code: 'SW_OPENAI_JOB_FAILED',
        type: 'server_error',
        param: null,
        message: expect.stringContaining('ValueError: bad prompt'),
        details: { jobId: failed!.id, status: 'FAILED', jobError: { error_type: 'ValueError' } },
      },
    });

    const timing = call('POST', url, { body: { stream: true } });
    await waitFor(async () => (await endpoint.jobs()).length === 2, 'the second job');
    const [slow] = await endpoint.tryTake('w', 1);
    expect(slow).toBeDefined();
    clock.advance(600_000);
    const timedOut = await timing;
    expect(timedOut.status).toBe(504);
    expect(errorCode(timedOut)).toBe('SW_OPENAI_JOB_TIMED_OUT');
  });

  it("the harness's OpenAI wait elapsing cancels the job and answers 504", async () => {
    const clock = new ManualClock();
    running = await startTestServer({ openaiTimeoutMs: 5_000 }, { clock });
    const endpoint = running.harness.endpoint('ep');
    const pending = call('POST', `${running.endpointUrl()}/openai/v1/chat/completions`, { body: {} });
    await waitFor(async () => (await endpoint.jobs()).length === 1, 'the job');
    clock.advance(5_000);
    const answer = await pending;
    expect(answer.status).toBe(504);
    expect(errorCode(answer)).toBe('SW_OPENAI_JOB_TIMED_OUT');
    expect((await endpoint.jobs())[0]!.status).toBe('CANCELLED');
  });

  it('streams JSON chunks as data: events and passes SSE text through, ending data: [DONE]', async () => {
    running = await startTestServer();
    stopWorker = startTestWorker(running.harness, async function* () {
      yield { n: 1 };
      yield 'data: {"n":2}\n\n';
      yield ['data: {"n":3}\n', '\n'];
    }).stop;
    const answer = await call('POST', `${running.endpointUrl()}/openai/v1/chat/completions`, { body: { stream: true } });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(answer.text).toBe('data: {"n":1}\n\ndata: {"n":2}\n\ndata: {"n":3}\n\ndata: [DONE]\n\n');
  });

  it('a job failing mid-stream ends the stream with an error event and no [DONE]', async () => {
    running = await startTestServer();
    stopWorker = startTestWorker(running.harness, async function* () {
      yield { n: 1 };
      throw new Error('mid-stream');
    }).stop;
    const answer = await call('POST', `${running.endpointUrl()}/openai/v1/chat/completions`, { body: { stream: true } });
    expect(answer.status).toBe(200);
    const events = answer.text.split('\n\n').filter((event) => event.length > 0);
    expect(events[0]).toBe('data: {"n":1}');
    expect(JSON.parse(events[1]!.slice('data: '.length))).toMatchObject({
      error: { code: 'SW_OPENAI_JOB_FAILED', message: expect.stringContaining('mid-stream') },
    });
    expect(answer.text).not.toContain('[DONE]');
  });

  it('a streaming job that fails before any chunk is answered as a JSON error with a non-2xx status', async () => {
    running = await startTestServer();
    stopWorker = startTestWorker(running.harness, async () => {
      throw new Error('no model');
    }).stop;
    const answer = await call('POST', `${running.endpointUrl()}/openai/v1/chat/completions`, { body: { stream: true } });
    expect(answer.status).toBe(502);
    expect(errorCode(answer)).toBe('SW_OPENAI_JOB_FAILED');
  });

  it('a caller that goes away cancels the job', async () => {
    running = await startTestServer();
    let aborted = false;
    stopWorker = startTestWorker(running.harness, async function* (_job: unknown, ctx: { signal: AbortSignal }) {
      yield { n: 1 };
      await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve(), { once: true }));
      aborted = true;
    }).stop;
    const controller = new AbortController();
    const response = await fetch(`${running.endpointUrl()}/openai/v1/chat/completions`, {
      method: 'POST',
      body: JSON.stringify({ stream: true }),
      headers: { 'content-type': 'application/json' },
      signal: controller.signal,
    });
    const reader = response.body!.getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toContain('"n":1');
    controller.abort();
    await waitFor(() => aborted, 'the handler to be stopped');
    expect((await running.harness.endpoint('ep').jobs())[0]!.status).toBe('CANCELLED');
  });

  it('400 in OpenAI shape for a body that is not a JSON object', async () => {
    running = await startTestServer();
    const answer = await call('POST', `${running.endpointUrl()}/openai/v1/chat/completions`, { body: '[1,2]' });
    expect(answer.status).toBe(400);
    expect(answer.json).toMatchObject({ error: { code: 'SW_INVALID_REQUEST', type: 'invalid_request_error', param: null } });
  });
});
