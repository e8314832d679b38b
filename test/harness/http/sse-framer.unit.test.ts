/**
 * The SSE framing of OpenAI streams, and the route patterns behind 405.
 */
import { describe, expect, it } from 'vitest';
import { SseFramer } from '../../../packages/platform/src/harness/server-api.js';
import { RouteTable, patternToRegex } from '../../../packages/platform/src/harness/http/route-table.js';

describe('SseFramer', () => {
  it('frames JSON values as data: events', () => {
    const framer = new SseFramer();
    expect(framer.frame({ a: 1 })).toBe('data: {"a":1}\n\n');
    expect(framer.frame('plain token')).toBe('data: "plain token"\n\n');
    expect(framer.frame(undefined)).toBe('');
    expect(framer.done()).toBe('data: [DONE]\n\n');
    expect(framer.done()).toBe('');
  });

  it('passes SSE text through, also the pieces of a line split over chunks', () => {
    const framer = new SseFramer();
    expect(framer.frame('data: {"a":')).toBe('data: {"a":');
    expect(framer.frame('1}\n\n')).toBe('1}\n\n');
    expect(framer.frame('event: x\ndata: 2\n\n')).toBe('event: x\ndata: 2\n\n');
  });

  it('closes an open event before its own, so [DONE] never merges with the worker text', () => {
    const framer = new SseFramer();
    expect(framer.frame('data: 1\n')).toBe('data: 1\n');
    expect(framer.done()).toBe('\ndata: [DONE]\n\n');
    const other = new SseFramer();
    other.frame('data: 1');
    expect(other.frame({ b: 2 })).toBe('\n\ndata: {"b":2}\n\n');
  });

  it('does not add [DONE] when the worker sent it', () => {
    const framer = new SseFramer();
    framer.frame('data: [DONE]\n\n');
    expect(framer.sawDone).toBe(true);
    expect(framer.done()).toBe('');
  });

  it('frames each element of an array (a batch) on its own', () => {
    expect(new SseFramer().frame([{ a: 1 }, { a: 2 }])).toBe('data: {"a":1}\n\ndata: {"a":2}\n\n');
  });
});

describe('route patterns', () => {
  it('match concrete paths segment by segment', () => {
    const regex = patternToRegex('/v2/:endpointId/status/:jobId');
    expect(regex.test('/v2/ep/status/abc')).toBe(true);
    expect(regex.test('/v2/ep/status/abc/')).toBe(true);
    expect(regex.test('/v2/ep/status')).toBe(false);
    expect(regex.test('/v2/ep/status/a/b')).toBe(false);
    expect(patternToRegex('/v2/:endpointId/openai/v1/*').test('/v2/ep/openai/v1/chat/completions')).toBe(true);
    expect(patternToRegex('/v1/templates/:id/update').test('/v1/templates/x/update')).toBe(true);
  });

  it('collects the methods of every route matching a path', () => {
    const table = new RouteTable();
    table.add('/v2/:endpointId/status/:jobId', ['GET', 'HEAD']);
    table.add('/v2/:endpointId/cancel/:jobId', 'POST');
    table.add('/v2/:endpointId/status/:jobId', 'delete');
    expect(table.methodsFor('/v2/ep/status/1')).toEqual(['DELETE', 'GET', 'HEAD']);
    expect(table.methodsFor('/v2/ep/nothing/1')).toEqual([]);
  });
});
