/**
 * @module examples/load-balancing/app
 * The example's HTTP app as a fastify instance, OpenAI-style: `GET /v1/models` and
 * `POST /v1/chat/completions` (a JSON answer, or with `"stream": true` server-sent
 * events of `chat.completion.chunk` objects ending in `data: [DONE]`). The worker
 * hands it the model that init loaded.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import * as z from 'zod';
import type { Model } from './model.js';

const ChatRequest = z.object({
  model: z.string().optional(),
  messages: z.array(z.object({ role: z.string(), content: z.string() })).min(1),
  stream: z.boolean().optional(),
});

/** Pause between streamed tokens, ms: enough to see them arrive one by one. */
const TOKEN_GAP_MS = 20;

export function buildApp(model: Model): FastifyInstance {
  const app = Fastify({ logger: false });
  app.get('/v1/models', async () => ({ object: 'list', data: [{ id: model.id, object: 'model', created: 0, owned_by: 'example' }] }));
  app.post('/v1/chat/completions', async (request, reply) => {
    const parsed = ChatRequest.safeParse(request.body);
    if (!parsed.success) return reply.code(400).send({ error: { message: parsed.error.message, type: 'invalid_request_error' } });
    const prompt = parsed.data.messages[parsed.data.messages.length - 1]?.content ?? '';
    const tokens = model.generate(prompt);
    const id = `chatcmpl-${Date.now().toString(36)}`;
    const created = Math.floor(Date.now() / 1000);
    if (parsed.data.stream !== true) {
      return {
        id,
        object: 'chat.completion',
        created,
        model: model.id,
        choices: [{ index: 0, message: { role: 'assistant', content: tokens.join('') }, finish_reason: 'stop' }],
        usage: { prompt_tokens: prompt.split(/\s+/).length, completion_tokens: tokens.length, total_tokens: prompt.split(/\s+/).length + tokens.length },
      };
    }
    reply.hijack();
    const out = reply.raw;
    out.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
    let closed = false;
    out.on('close', () => (closed = true));
    const send = (delta: Record<string, unknown>, finish: string | null): void => {
      const chunk = { id, object: 'chat.completion.chunk', created, model: model.id, choices: [{ index: 0, delta, finish_reason: finish }] };
      out.write(`data: ${JSON.stringify(chunk)}\n\n`);
    };
    send({ role: 'assistant' }, null);
    for (const token of tokens) {
      if (closed) return;
      await new Promise((resolve) => setTimeout(resolve, TOKEN_GAP_MS));
      send({ content: token }, null);
    }
    send({}, 'stop');
    out.end('data: [DONE]\n\n');
  });
  return app;
}
