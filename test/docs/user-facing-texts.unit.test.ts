/**
 * What people read (the --serve-api banner's rate-limit line, the flags' help, the error
 * codes' meanings, the OpenAPI document) names what it means, never a section of our
 * internal spec ("spec 8.2" said nothing to a reader who does not have it).
 */
import { describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../../packages/platform/src/harness/openapi/openapi-document.js';
import { HARNESS_SETTINGS } from '../../packages/platform/src/cli/commands/harness-settings.js';
import { PLATFORM_ERROR_CODES } from '../../packages/platform/src/job/platform-error-codes.js';
import { describeRateLimits } from '../../packages/platform/src/local/serve-api.js';
import { ERROR_CODES } from '../../src/job/error-codes.js';
import { WORKER_FLAG_SETTINGS } from '../../src/worker/worker-flags.js';

const INTERNAL = /\bspec \d+(\.\d+)?/;

describe('texts people read', () => {
  it('cite no section of the internal spec', () => {
    const texts = [
      describeRateLimits({ limits: {}, windowMs: 10_000, requestsPerWorker: 100 }),
      JSON.stringify(
        buildOpenApiDocument({
          endpoints: [{ id: 'local', checksInput: false }],
          rootEndpoint: 'local',
          authenticated: true,
          version: '0.0.0',
          management: true,
        }),
      ),
      ...Object.values(WORKER_FLAG_SETTINGS).map((setting) => setting.description),
      ...Object.values(HARNESS_SETTINGS).map((setting) => setting.description),
      ...Object.values(ERROR_CODES).map((entry) => `${entry.meaning} ${entry.fix}`),
      ...Object.values(PLATFORM_ERROR_CODES).map((entry) => `${entry.meaning} ${entry.fix}`),
    ];
    for (const text of texts) expect(text).not.toMatch(INTERNAL);
  });
});
