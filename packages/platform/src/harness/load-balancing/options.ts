/**
 * @module harness/load-balancing/options
 * Settings of the harness's load-balancing endpoints, validated once.
 */
import * as z from 'zod';
import { AllowListSchema } from 'serverless-worker/internal';

/** The platform answers 524 past about 5.5 minutes; the harness's default, ms. */
export const DEFAULT_LB_REQUEST_TIMEOUT_MS = 330_000;

export const LoadBalancingSettingsSchema = z.object({
  /** Past this a request is answered 524 SW_LB_REQUEST_TIMEOUT (or its stream cut), ms; default 330 000. */
  requestTimeoutMs: z.number().int().min(1).max(86_400_000).default(DEFAULT_LB_REQUEST_TIMEOUT_MS),
  /** Period of the harness's GET /ping to each worker, ms; default 1 000. */
  pingIntervalMs: z.number().int().min(10).max(600_000).default(1_000),
  /** Bound of one ping, ms; default 2 000. */
  pingTimeoutMs: z.number().int().min(1).max(600_000).default(2_000),
  /** A worker unhealthy (or unreachable) for this long is forgotten, ms; default 60 000. */
  forgetAfterMs: z.number().int().min(0).max(86_400_000).default(60_000),
  /**
   * Worker URLs allowed beyond the default policy (net/target-policy.ts): CIDR ranges,
   * addresses, or `loopback`, `link-local`, `metadata`. Never the harness itself; without
   * an API key only loopback by default; link-local and metadata addresses never by default.
   */
  allow: AllowListSchema.default([]),
});

export type LoadBalancingSettingsInput = z.input<typeof LoadBalancingSettingsSchema>;
export type LoadBalancingSettings = Readonly<z.output<typeof LoadBalancingSettingsSchema>>;
