/**
 * Where the harness's load-balancing proxy sends a request: always the worker's own
 * origin with the caller's path and query as the request target (never resolved as a
 * URL), and which upstream errors take a worker out of the pool (only a connection that
 * could not be made).
 */
import { describe, expect, it } from 'vitest';
import { isConnectFailure, upstreamTarget } from '../../../packages/platform/src/harness/load-balancing/index.js';

describe('upstreamTarget', () => {
  it('keeps the worker origin whatever the path holds', () => {
    for (const path of ['//127.0.0.1:9/secret', '//foo/bar?x=1', '/../../etc/passwd', '/a/./b/../c?q=//evil', '/v1/chat/completions?stream=1']) {
      expect(upstreamTarget('http://127.0.0.1:8080/ignored-base', path)).toEqual({ secure: false, options: { hostname: '127.0.0.1', port: '8080', path } });
    }
    expect(upstreamTarget('https://[::1]/', '/x')).toEqual({ secure: true, options: { hostname: '::1', port: 443, path: '/x' } });
    expect(upstreamTarget('http://worker.local', '/x').options.port).toBe(80);
  });

  it('refuses a target that is not a path', () => {
    expect(() => upstreamTarget('http://127.0.0.1:8080', 'http://evil/')).toThrow(/must start with "\/"/);
    expect(() => upstreamTarget('http://127.0.0.1:8080', '')).toThrow(/must start with "\/"/);
  });
});

describe('isConnectFailure', () => {
  it('is true only for errors of a connection that could not be made', () => {
    const coded = (code: string): NodeJS.ErrnoException => Object.assign(new Error(code), { code });
    for (const code of ['ECONNREFUSED', 'EHOSTUNREACH', 'ENOTFOUND', 'ETIMEDOUT']) expect(isConnectFailure(coded(code))).toBe(true);
    for (const code of ['ECONNRESET', 'EPIPE', 'ERR_INVALID_CHAR', 'ERR_UNESCAPED_CHARACTERS']) expect(isConnectFailure(coded(code))).toBe(false);
    expect(isConnectFailure(new Error('socket hang up'))).toBe(false);
    expect(isConnectFailure(undefined)).toBe(false);
  });
});
