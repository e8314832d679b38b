/**
 * @module harness/launcher/docker/log-frames
 * A container's output as the engine streams it when the container has no TTY: frames
 * of an 8-byte header (stream 1 stdout, 2 stderr; 3 bytes unused; payload length, 4
 * bytes big-endian) and the payload. This splits the frames back into stdout and stderr
 * and those into lines, as a worker process's pipes are read: a line may span frames,
 * and the last unfinished line of each stream is given at the end.
 */

export type LogStream = 'stdout' | 'stderr';

const HEADER_BYTES = 8;

export class LogFrames {
  readonly #onLine: (stream: LogStream, line: string) => void;
  #pending: Buffer = Buffer.alloc(0);
  readonly #partial: Record<LogStream, string> = { stdout: '', stderr: '' };
  readonly #decoders = { stdout: new TextDecoder('utf-8'), stderr: new TextDecoder('utf-8') };

  constructor(onLine: (stream: LogStream, line: string) => void) {
    this.#onLine = onLine;
  }

  /** Feed the next bytes of the stream. */
  push(chunk: Buffer): void {
    this.#pending = this.#pending.length === 0 ? chunk : Buffer.concat([this.#pending, chunk]);
    while (this.#pending.length >= HEADER_BYTES) {
      const size = this.#pending.readUInt32BE(4);
      if (this.#pending.length < HEADER_BYTES + size) break;
      const kind = this.#pending[0];
      const payload = this.#pending.subarray(HEADER_BYTES, HEADER_BYTES + size);
      this.#pending = this.#pending.subarray(HEADER_BYTES + size);
      // 0 is stdin (never sent for logs); anything else unknown counts as stdout.
      this.#text(kind === 2 ? 'stderr' : 'stdout', payload);
    }
  }

  /** The stream ended: hand out the unfinished last lines. */
  end(): void {
    for (const stream of ['stdout', 'stderr'] as const) {
      const rest = this.#partial[stream] + this.#decoders[stream].decode();
      this.#partial[stream] = '';
      if (rest.length > 0) this.#onLine(stream, rest.replace(/\r$/, ''));
    }
  }

  #text(stream: LogStream, payload: Buffer): void {
    const text = this.#partial[stream] + this.#decoders[stream].decode(payload, { stream: true });
    const lines = text.split('\n');
    this.#partial[stream] = lines.pop() ?? '';
    for (const line of lines) this.#onLine(stream, line.replace(/\r$/, ''));
  }
}
