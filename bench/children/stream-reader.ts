/**
 * @module bench/children/stream-reader
 * A client reading a job's /stream over HTTP, in its own process so that reading does
 * not load the process that serves the stream. Asked `{ type: 'read', url,
 * endpointId, jobId, timeoutMs }`, it reads until the job has ended and answers
 * `{ type: 'read', marks, chunks, textLength, status }` (see lib/http-client).
 */
import { QueueClient, readStream } from '../lib/http-client.js';

interface ReadRequest {
  readonly type: 'read';
  readonly url: string;
  readonly endpointId: string;
  readonly jobId: string;
  readonly timeoutMs: number;
}

const clients = new Map<string, QueueClient>();

process.on('message', (message: ReadRequest) => {
  void (async () => {
    const key = `${message.url} ${message.endpointId}`;
    let client = clients.get(key);
    if (!client) {
      client = new QueueClient(message.url, message.endpointId, 2);
      clients.set(key, client);
    }
    const read = await readStream(client, message.jobId, message.timeoutMs);
    process.send?.({ type: 'read', ...read });
  })().catch((error: unknown) => process.send?.({ type: 'error', message: String(error instanceof Error ? error.stack : error) }));
});
process.send?.({ type: 'ready' });
process.on('disconnect', () => process.exit(0));
