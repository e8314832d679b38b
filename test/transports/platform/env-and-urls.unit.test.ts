import { describe, expect, it } from 'vitest';
import { isServerlessWorkerError } from '../../../src/job/index.js';
import { appendParams, buildPlatformUrls, parsePlatformEnv, resolveWorkerId, type PlatformEnv } from '../../../src/transports/platform/index.js';

const BASE = {
  RUNPOD_WEBHOOK_GET_JOB: 'https://api.example/v2/ep1/job-take/$ID?',
  RUNPOD_WEBHOOK_POST_OUTPUT: 'https://api.example/v2/ep1/job-done/$RUNPOD_POD_ID/$ID?',
  RUNPOD_WEBHOOK_POST_STREAM: 'https://api.example/v2/ep1/job-stream/$RUNPOD_POD_ID/$ID?',
  RUNPOD_WEBHOOK_PING: 'https://api.example/v2/ep1/ping/$RUNPOD_POD_ID',
};

function envError(env: NodeJS.ProcessEnv): Error & { code?: string } {
  try {
    parsePlatformEnv(env);
  } catch (error) {
    expect(isServerlessWorkerError(error)).toBe(true);
    return error as Error & { code?: string };
  }
  throw new Error('expected SW_INVALID_ENV');
}

describe('parsePlatformEnv', () => {
  it('reads every variable, with RUNPOD_PING_INTERVAL defaulting to 10000', () => {
    const env = parsePlatformEnv({ ...BASE, RUNPOD_AI_API_KEY: 'key-1', RUNPOD_POD_ID: 'pod-9', RUNPOD_POD_HOSTNAME: 'host', RUNPOD_ENDPOINT_ID: 'ep1' });
    expect(env).toEqual({
      getJobUrl: BASE.RUNPOD_WEBHOOK_GET_JOB,
      postOutputUrl: BASE.RUNPOD_WEBHOOK_POST_OUTPUT,
      postStreamUrl: BASE.RUNPOD_WEBHOOK_POST_STREAM,
      pingUrl: BASE.RUNPOD_WEBHOOK_PING,
      pingIntervalMs: 10_000,
      apiKey: 'key-1',
      podId: 'pod-9',
      podHostname: 'host',
      endpointId: 'ep1',
    });
    expect(Object.isFrozen(env)).toBe(true);
  });

  it('reads RUNPOD_PING_INTERVAL in ms and treats blank variables as unset', () => {
    const env = parsePlatformEnv({ ...BASE, RUNPOD_PING_INTERVAL: ' 2500 ', RUNPOD_POD_ID: '', RUNPOD_WEBHOOK_PING: '' });
    expect(env.pingIntervalMs).toBe(2_500);
    expect(env.podId).toBeUndefined();
    expect(env.pingUrl).toBeUndefined();
  });

  it.each([
    ['RUNPOD_PING_INTERVAL', 'soon', 'whole number of milliseconds'],
    ['RUNPOD_PING_INTERVAL', '-5', 'whole number of milliseconds'],
    ['RUNPOD_PING_INTERVAL', '50', 'from 100 to 3600000'],
    ['RUNPOD_WEBHOOK_GET_JOB', 'not a url', 'http:// or https:// URL'],
    ['RUNPOD_WEBHOOK_GET_JOB', 'ftp://api.example/job-take/$ID', 'http:// or https:// URL'],
    ['RUNPOD_WEBHOOK_POST_OUTPUT', '/relative/$ID', 'http:// or https:// URL'],
    ['RUNPOD_WEBHOOK_POST_STREAM', 'stream', 'http:// or https:// URL'],
    ['RUNPOD_WEBHOOK_PING', 'ping me', 'http:// or https:// URL'],
    ['RUNPOD_POD_ID', 'has space', 'letters, digits'],
    ['RUNPOD_POD_ID', 'a/b', 'letters, digits'],
  ])('names %s when it is malformed (%j)', (name, value, expected) => {
    const error = envError({ ...BASE, [name]: value });
    expect(error.code).toBe('SW_INVALID_ENV');
    expect(error.message).toContain(name);
    expect(error.message).toContain(expected);
  });

  it('names RUNPOD_WEBHOOK_POST_OUTPUT when it is missing on the platform', () => {
    const error = envError({ RUNPOD_WEBHOOK_GET_JOB: BASE.RUNPOD_WEBHOOK_GET_JOB });
    expect(error.code).toBe('SW_INVALID_ENV');
    expect(error.message).toContain('RUNPOD_WEBHOOK_POST_OUTPUT is required');
  });

  it('names RUNPOD_AI_API_KEY when it cannot be a header, without echoing it', () => {
    const error = envError({ ...BASE, RUNPOD_AI_API_KEY: 'secret with spaces' });
    expect(error.message).toContain('RUNPOD_AI_API_KEY');
    expect(error.message).not.toContain('secret');
  });

  it('resolves the worker id: explicit, else RUNPOD_POD_ID, else random', () => {
    const env = parsePlatformEnv({ ...BASE, RUNPOD_POD_ID: 'pod-1' });
    expect(resolveWorkerId(env, 'mine')).toBe('mine');
    expect(resolveWorkerId(env)).toBe('pod-1');
    const random = resolveWorkerId(parsePlatformEnv(BASE));
    expect(random).toMatch(/^worker-[0-9a-f-]{12}$/);
    expect(resolveWorkerId(parsePlatformEnv(BASE))).not.toBe(random);
  });
});

describe('appendParams', () => {
  it('appends after ?, after & or with ? as the URL needs', () => {
    expect(appendParams('http://h/a?', { x: 1 })).toBe('http://h/a?x=1');
    expect(appendParams('http://h/a?gpu=A5000', { x: 1 })).toBe('http://h/a?gpu=A5000&x=1');
    expect(appendParams('http://h/a?gpu=1&', { x: 1 })).toBe('http://h/a?gpu=1&x=1');
    expect(appendParams('http://h/a', { x: true, y: undefined, z: 'a b,c' })).toBe('http://h/a?x=true&z=a%20b%2Cc');
    expect(appendParams('http://h/a', {})).toBe('http://h/a');
  });
});

describe('buildPlatformUrls', () => {
  const env: PlatformEnv = parsePlatformEnv(BASE);
  const urls = buildPlatformUrls(env, 'w1');

  it('substitutes $ID and $RUNPOD_POD_ID as the reference worker does', () => {
    expect(urls.take(false)).toBe('https://api.example/v2/ep1/job-take/w1?job_in_progress=0');
    expect(urls.take(true)).toBe('https://api.example/v2/ep1/job-take/w1?job_in_progress=1');
    expect(urls.takeBatch(4, true)).toBe('https://api.example/v2/ep1/job-take-batch/w1?batch_size=4&job_in_progress=1');
    expect(urls.done('j1', false)).toBe('https://api.example/v2/ep1/job-done/w1/j1?isStream=false');
    expect(urls.done('j1', true)).toBe('https://api.example/v2/ep1/job-done/w1/j1?isStream=true');
    expect(urls.stream('j1')).toBe('https://api.example/v2/ep1/job-stream/w1/j1?isStream=false');
    expect(urls.stop).toBe('https://api.example/v2/ep1/job-stop/w1?');
    expect(urls.ping).toBe('https://api.example/v2/ep1/ping/w1');
  });

  it('keeps a query the platform put in the template', () => {
    const withGpu = buildPlatformUrls(
      parsePlatformEnv({ ...BASE, RUNPOD_WEBHOOK_POST_OUTPUT: 'https://api.example/v2/ep1/job-done/$RUNPOD_POD_ID/$ID?gpu=NVIDIA+RTX+A5000' }),
      'p',
    );
    expect(withGpu.done('j', false)).toBe('https://api.example/v2/ep1/job-done/p/j?gpu=NVIDIA+RTX+A5000&isStream=false');
  });

  it('has no batch take or job stop when the take URL has no /job-take/, and no stream or ping URL when unset', () => {
    const odd = buildPlatformUrls(parsePlatformEnv({ RUNPOD_WEBHOOK_GET_JOB: 'https://h/take/$ID', RUNPOD_WEBHOOK_POST_OUTPUT: 'https://h/done/$ID' }), 'w');
    expect(odd.takeBatch(3, false)).toBeUndefined();
    expect(odd.stop).toBeUndefined();
    expect(odd.stream('j')).toBeUndefined();
    expect(odd.ping).toBeUndefined();
    expect(odd.take(false)).toBe('https://h/take/w?job_in_progress=0');
  });
});
