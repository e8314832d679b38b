/**
 * @module examples/openai/handler
 * The OpenAI example's handler: `/v1/chat/completions`, `/v1/completions` and
 * `/v1/models` in OpenAI's shapes, answered by the tiny model of model.ts. With
 * `"stream": true` it streams: chat completions as OpenAI chunk objects, completions
 * as ready-made SSE `data:` lines (the harness passes both through).
 */
import * as z from 'zod';
import { ServerlessWorkerError, type Handler } from 'serverless-worker';
import { MODEL_ID, finishReason, generate, words } from './model.js';

const Message = z.object({
  role: z.string(),
  content: z.union([z.string(), z.array(z.object({ type: z.string(), text: z.string().optional() })), z.null()]).optional(),
});
const Common = z.object({
  model: z.string().default(MODEL_ID),
  stream: z.boolean().default(false),
  max_tokens: z.number().int().min(1).optional(),
  stream_options: z.object({ include_usage: z.boolean().optional() }).nullish(),
});
const ChatInput = Common.extend({ messages: z.array(Message).min(1), max_completion_tokens: z.number().int().min(1).optional() });
const CompletionInput = Common.extend({ prompt: z.union([z.string(), z.array(z.string()).min(1)]) });
/** The job input the harness builds from an OpenAI call. */
export const OpenAiJobInput = z.object({ openai_route: z.string(), openai_input: z.record(z.string(), z.unknown()).default({}) });
export type OpenAiJobInputType = z.infer<typeof OpenAiJobInput>;

type Chat = z.infer<typeof ChatInput>;
type Completion = z.infer<typeof CompletionInput>;

const now = (): number => Math.floor(Date.now() / 1000);

function textOf(message: z.infer<typeof Message>): string {
  if (typeof message.content === 'string') return message.content;
  return (message.content ?? []).map((part) => part.text ?? '').join(' ');
}

function usage(prompt: string, tokens: string[]) {
  const prompt_tokens = words(prompt).length;
  return { prompt_tokens, completion_tokens: tokens.length, total_tokens: prompt_tokens + tokens.length };
}

function parseBody<S extends z.ZodType>(schema: S, body: unknown, route: string): z.infer<S> {
  const parsed = schema.safeParse(body);
  if (parsed.success) return parsed.data;
  const detail = parsed.error.issues.map((issue) => `${issue.path.join('.') || '(body)'}: ${issue.message}`).join('; ');
  throw new ServerlessWorkerError('SW_INPUT_VALIDATION', `Invalid ${route} request: ${detail}`);
}

function chatCompletion(id: string, body: Chat) {
  const prompt = textOf(body.messages.filter((m) => m.role === 'user').at(-1) ?? body.messages.at(-1)!);
  const maxTokens = body.max_completion_tokens ?? body.max_tokens;
  const tokens = generate(prompt, maxTokens);
  return {
    id: `chatcmpl-${id}`,
    object: 'chat.completion' as const,
    created: now(),
    model: body.model,
    choices: [
      {
        index: 0,
        message: { role: 'assistant' as const, content: tokens.join(''), refusal: null },
        logprobs: null,
        finish_reason: finishReason(prompt, maxTokens),
      },
    ],
    usage: usage(prompt, tokens),
  };
}

/** Chat streaming: OpenAI chunk objects, one token each; the harness frames them as `data: <json>`. */
async function* streamChat(id: string, body: Chat, signal: AbortSignal) {
  const answer = chatCompletion(id, body);
  const base = { id: answer.id, object: 'chat.completion.chunk' as const, created: answer.created, model: answer.model };
  yield { ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }] };
  const prompt = textOf(body.messages.filter((m) => m.role === 'user').at(-1) ?? body.messages.at(-1)!);
  for (const token of generate(prompt, body.max_completion_tokens ?? body.max_tokens)) {
    if (signal.aborted) return;
    yield { ...base, choices: [{ index: 0, delta: { content: token }, logprobs: null, finish_reason: null }] };
  }
  yield { ...base, choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: answer.choices[0]!.finish_reason }] };
  if (body.stream_options?.include_usage) yield { ...base, choices: [], usage: answer.usage };
}

function completion(id: string, body: Completion) {
  const prompts = Array.isArray(body.prompt) ? body.prompt : [body.prompt];
  const choices = prompts.map((prompt, index) => ({
    index,
    text: generate(prompt, body.max_tokens).join(''),
    logprobs: null,
    finish_reason: finishReason(prompt, body.max_tokens),
  }));
  const all = prompts.join(' ');
  return { id: `cmpl-${id}`, object: 'text_completion' as const, created: now(), model: body.model, choices, usage: usage(all, generate(all, undefined)) };
}

/** Completion streaming as ready-made SSE lines, as vLLM workers send them; the harness passes them through. */
async function* streamCompletion(id: string, body: Completion, signal: AbortSignal) {
  const answer = completion(id, body);
  const prompts = Array.isArray(body.prompt) ? body.prompt : [body.prompt];
  for (const [index, prompt] of prompts.entries()) {
    for (const token of generate(prompt, body.max_tokens)) {
      if (signal.aborted) return;
      const chunk = {
        id: answer.id,
        object: 'text_completion',
        created: answer.created,
        model: answer.model,
        choices: [{ index, text: token, logprobs: null, finish_reason: null }],
      };
      yield `data: ${JSON.stringify(chunk)}\n\n`;
    }
    const last = {
      id: answer.id,
      object: 'text_completion',
      created: answer.created,
      model: answer.model,
      choices: [{ index, text: '', logprobs: null, finish_reason: answer.choices[index]!.finish_reason }],
    };
    yield `data: ${JSON.stringify(last)}\n\n`;
  }
  yield 'data: [DONE]\n\n';
}

function models() {
  return { object: 'list' as const, data: [{ id: MODEL_ID, object: 'model' as const, created: 1_767_225_600, owned_by: 'serverless-worker' }] };
}

/**
 * The handler. A plain (not async) function: it answers a promise for plain requests
 * and an async generator for streaming ones, and the runtime streams only the latter.
 */
export const openAiHandler: Handler<OpenAiJobInputType> = (job, ctx) => {
  const { openai_route: route, openai_input: body } = job.input;
  ctx.log.info({ route }, 'openai request');
  switch (route) {
    case '/v1/chat/completions': {
      const chat = parseBody(ChatInput, body, route);
      return chat.stream ? streamChat(job.id, chat, ctx.signal) : Promise.resolve(chatCompletion(job.id, chat));
    }
    case '/v1/completions': {
      const request = parseBody(CompletionInput, body, route);
      return request.stream ? streamCompletion(job.id, request, ctx.signal) : Promise.resolve(completion(job.id, request));
    }
    case '/v1/models':
      return Promise.resolve(models());
    default:
      throw new ServerlessWorkerError(
        'SW_INPUT_VALIDATION',
        `This worker does not serve ${route}; it serves /v1/chat/completions, /v1/completions and /v1/models`,
      );
  }
};
