/**
 * @module load-balancing/announce
 * A load-balancing worker started with SERVERLESS_WORKER_HARNESS_URL registers with
 * that running `serverless-worker harness` (`POST /v2/{endpoint}/load-balancing/workers`
 * with its app and health URLs) as it starts, before init, so that the harness's
 * /health shows it initializing; it unregisters as it drains. The platform needs none
 * of this: it knows its workers.
 */
import type { Logger } from 'pino';
import { urlForLog } from '../log/index.js';

export interface Announcement {
  readonly harnessUrl: string;
  readonly endpointId: string;
  readonly workerId: string;
  readonly url: string;
  readonly healthUrl: string;
  readonly concurrency: number;
  readonly apiKey: string | undefined;
}

const TIMEOUT_MS = 10_000;

function base(announcement: Announcement): string {
  return `${announcement.harnessUrl.replace(/\/+$/, '')}/v2/${encodeURIComponent(announcement.endpointId)}/load-balancing/workers`;
}

function headers(announcement: Announcement): Record<string, string> {
  return { 'content-type': 'application/json', ...(announcement.apiKey !== undefined ? { authorization: `Bearer ${announcement.apiKey}` } : {}) };
}

/** Register; logs and answers false when the harness refused or could not be reached. */
export async function announce(announcement: Announcement, logger: Logger): Promise<boolean> {
  const { url, healthUrl, workerId, concurrency, endpointId } = announcement;
  try {
    const response = await fetch(base(announcement), {
      method: 'POST',
      headers: headers(announcement),
      body: JSON.stringify({ url, healthUrl, workerId, concurrency }),
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    if (response.ok) {
      logger.info({ harness: urlForLog(announcement.harnessUrl), endpointId, workerId }, 'registered with the harness as a load-balancing worker');
      return true;
    }
    logger.error({ harness: urlForLog(announcement.harnessUrl), status: response.status, body: (await response.text()).slice(0, 500) }, 'the harness refused the registration');
  } catch (error) {
    logger.error({ harness: urlForLog(announcement.harnessUrl), err: error }, 'could not register with the harness');
  }
  return false;
}

/** Unregister, best effort. */
export async function withdraw(announcement: Announcement, logger: Logger): Promise<void> {
  try {
    await fetch(`${base(announcement)}/${encodeURIComponent(announcement.workerId)}`, {
      method: 'DELETE',
      headers: headers(announcement),
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  } catch (error) {
    logger.warn({ err: error }, 'could not unregister from the harness');
  }
}
