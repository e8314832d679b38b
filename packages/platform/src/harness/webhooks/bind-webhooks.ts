/**
 * @module harness/webhooks/bind-webhooks
 * Sends a job's final record to its `webhook` (and its `webhookV2`, which some
 * official clients send) when the job ends. The payload is the job as `/status` shows
 * it at that moment, taken when the job ends so that later changes (a retry) do not
 * leak into it.
 */
import { type Harness, toJobView } from 'serverless-worker/internal';
import type { WebhookSender } from './webhook-sender.js';

/** Subscribe every endpoint of `harness` (present and future); returns the unsubscribe. */
export function bindWebhooks(harness: Harness, sender: WebhookSender): () => void {
  const disposers: Array<() => void> = [];
  const stopWatchingEndpoints = harness.onEndpoint((endpoint) => {
    disposers.push(
      endpoint.jobEnded.add((job) => {
        const urls = new Set([job.request.webhook, job.request.webhookV2].filter((url): url is string => url !== undefined));
        if (urls.size === 0) return;
        const payload = toJobView(job);
        for (const url of urls) sender.deliver(url, payload, { jobId: job.id, endpointId: job.endpointId });
      }),
    );
  });
  return () => {
    stopWatchingEndpoints();
    for (const dispose of disposers.splice(0)) dispose();
  };
}
