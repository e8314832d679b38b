/**
 * @module log/raw-output
 * stdout's and stderr's writes as they were when the SDK loaded. While a job runs, the
 * runtime names what its code prints with the job (worker/job-output.ts replaces
 * `process.stdout.write` and `process.stderr.write`); the pretty logger writes its own
 * lines through these instead, so that a log line is never taken for printed output
 * and wrapped a second time.
 */
import { Writable } from 'node:stream';

type Write = typeof process.stdout.write;

export const rawWrite: { readonly stdout: Write; readonly stderr: Write } = {
  stdout: process.stdout.write.bind(process.stdout) as Write,
  stderr: process.stderr.write.bind(process.stderr) as Write,
};

/** A writable whose writes go to stderr as written, never named with a job: the pretty logger's destination. */
export function rawStderr(): NodeJS.WritableStream {
  return new Writable({
    write(chunk: Buffer | string, _encoding, callback) {
      rawWrite.stderr(chunk);
      callback();
    },
  });
}
