/**
 * @module log/redact
 * Paths pino censors in every log line: API keys, authorization headers and the
 * secret fields of s3Config, wherever a job or request lands in a log object.
 */
const SECRET_KEYS = ['apiKey', 'api_key', 'authorization', 'Authorization', 'accessId', 'accessSecret'];
const S3_SECRETS = ['s3Config.accessId', 's3Config.accessSecret'];

/** Redaction paths for pino: top level, one, two and three levels down. */
export const REDACT_PATHS: readonly string[] = [
  ...SECRET_KEYS,
  ...SECRET_KEYS.map((k) => `*.${k}`),
  ...S3_SECRETS,
  ...S3_SECRETS.map((p) => `*.${p}`),
  ...S3_SECRETS.map((p) => `*.*.${p}`),
  ...S3_SECRETS.map((p) => `*.*.*.${p}`),
  'headers.authorization',
  '*.headers.authorization',
  'req.headers.authorization',
  '*.*.headers.authorization',
];

export const REDACT_CENSOR = '[redacted]';
