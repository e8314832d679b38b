/**
 * The request logger fastify makes per request (lazy-child-logger.ts): no pino child
 * until a request logs, and a logged line still carries the request id and the level
 * rules of the parent.
 */
import { Writable } from 'node:stream';
import Fastify, { type FastifyBaseLogger } from 'fastify';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { lazyChildLoggerFactory } from '../../../packages/platform/src/harness/http/lazy-child-logger.js';

function capture(level: pino.Level): { logger: pino.Logger; lines: Array<Record<string, unknown>>; children: () => number } {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n')) if (line.trim() !== '') lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  let made = 0;
  // pino calls onChild for every child made, at any depth.
  const logger = pino({ level, onChild: () => void made++ }, stream);
  return { logger, lines, children: () => made };
}

describe('lazyChildLoggerFactory', () => {
  it('makes no pino child for a request that logs nothing, and one for a request that logs, its lines carrying reqId', async () => {
    const { logger, lines, children } = capture('info');
    const app = Fastify({ loggerInstance: logger as FastifyBaseLogger, childLoggerFactory: lazyChildLoggerFactory, disableRequestLogging: true });
    app.get('/quiet', async () => ({ ok: true }));
    app.get('/loud', async (request) => {
      request.log.debug('not at info');
      request.log.warn({ jobId: 'job-1' }, 'a warning');
      request.log.error(new Error('boom'));
      return { ok: true };
    });
    await app.ready();
    const before = children();
    for (let i = 0; i < 5; i++) expect((await app.inject({ method: 'GET', url: '/quiet' })).statusCode).toBe(200);
    expect(children()).toBe(before);
    expect((await app.inject({ method: 'GET', url: '/loud' })).statusCode).toBe(200);
    expect(children()).toBe(before + 1);
    await app.close();
    const warning = lines.find((line) => line.msg === 'a warning');
    expect(warning).toMatchObject({ level: 40, jobId: 'job-1', reqId: expect.any(String) as string });
    const error = lines.find((line) => line.level === 50);
    expect(error).toMatchObject({ reqId: warning?.reqId, err: { message: 'boom' } });
    expect(lines.some((line) => line.msg === 'not at info')).toBe(false);
  });

  it('answers the level of the parent, or its own once set, and makes children of the real child', async () => {
    const { logger, lines } = capture('warn');
    const lazy = lazyChildLoggerFactory(logger as FastifyBaseLogger, { reqId: 'r-1' }, {});
    expect(lazy.level).toBe('warn');
    lazy.level = 'debug';
    expect(lazy.level).toBe('debug');
    lazy.debug('now shown');
    lazy.child({ part: 'x' }).info('from a grandchild');
    // The capturing stream takes a write queued behind another on the next tick.
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines.map((line) => [line.msg, line.reqId])).toEqual([
      ['now shown', 'r-1'],
      ['from a grandchild', 'r-1'],
    ]);
  });
});
