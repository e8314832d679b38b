import { describe, expect, it } from 'vitest';
import { ServerlessWorkerError, parseJobRequest, resolvePolicy } from '../../src/job/index.js';

function errorOf(body: unknown): ServerlessWorkerError {
  try {
    parseJobRequest(body);
  } catch (error) {
    return error as ServerlessWorkerError;
  }
  throw new Error('expected parseJobRequest to throw');
}

describe('job request schema (spec 4.3)', () => {
  it('accepts a minimal request and resolves the policy defaults', () => {
    const request = parseJobRequest({ input: { prompt: 'hi' } });
    expect(request.input).toEqual({ prompt: 'hi' });
    expect(request.policy).toBeUndefined();
    expect(resolvePolicy(request.policy)).toEqual({ executionTimeout: 600_000, lowPriority: false, ttl: 86_400_000 });
  });

  it('keeps every documented field, webhookV2 and s3Config.objectPath included', () => {
    const body = {
      input: { a: 1 },
      webhook: 'https://example.test/hook',
      webhookV2: 'http://127.0.0.1:9/hook',
      policy: { executionTimeout: 5_000, lowPriority: true, ttl: 604_800_000 },
      s3Config: { accessId: 'id', accessSecret: 'secret', bucketName: 'b', endpointUrl: 'https://s3.test', objectPath: 'x/y' },
    };
    expect(parseJobRequest(body)).toEqual(body);
  });

  it('names a missing input', () => {
    const error = errorOf({});
    expect(error.code).toBe('SW_INVALID_JOB_REQUEST');
    expect(error.message).toContain('input is required');
  });

  it('refuses an input that is not an object, naming what it got', () => {
    const error = errorOf({ input: 'text' });
    expect(error.message).toMatch(/input.*must be a JSON object.*got "text"/);
  });

  it.each([
    ['executionTimeout', 4_999, '5000 to 604800000'],
    ['executionTimeout', 604_800_001, '5000 to 604800000'],
    ['ttl', 9_999, '10000 to 604800000'],
    ['ttl', 604_800_001, '10000 to 604800000'],
  ])('refuses policy.%s = %d naming the range and the value', (field, value, range) => {
    const error = errorOf({ input: {}, policy: { [field]: value } });
    expect(error.message).toContain(`policy.${field}`);
    expect(error.message).toContain(range);
    expect(error.message).toContain(`got ${value}`);
    expect(error.details?.issues).toEqual([expect.objectContaining({ path: `policy.${field}` })]);
  });

  it('refuses a fractional timeout and a non-boolean lowPriority', () => {
    expect(errorOf({ input: {}, policy: { executionTimeout: 5000.5 } }).message).toContain('whole number');
    expect(errorOf({ input: {}, policy: { lowPriority: 'yes' } }).message).toContain('policy.lowPriority must be true or false');
  });

  it.each(['file:///etc/passwd', 'javascript:alert(1)', 'not a url'])('refuses webhook %s', (webhook) => {
    const error = errorOf({ input: {}, webhook });
    expect(error.message).toContain('webhook');
    expect(error.message).toContain('http:// or https://');
  });

  it('names each missing s3Config field', () => {
    const error = errorOf({ input: {}, s3Config: { accessId: 'a' } });
    expect(error.message).toContain('s3Config.accessSecret');
    expect(error.message).toContain('s3Config.bucketName');
  });

  it('refuses a body that is not an object', () => {
    expect(errorOf([1, 2]).message).toContain('expected a JSON object');
    expect(errorOf(null).code).toBe('SW_INVALID_JOB_REQUEST');
  });
});
