/**
 * @module log/exit-safe-destination
 * pino's asynchronous destination on a file descriptor, with a flush at exit that cannot
 * hang. pino flushes an asynchronous destination synchronously when the process exits
 * (SonicBoom's `flushSync`), and SonicBoom 4 retries a write that fails there with any
 * error but EAGAIN forever, 100 ms apart. So a process whose stderr reader is gone (a
 * worker whose harness was SIGKILLed, a container whose log collector died) never
 * finished `process.exit` when a line was waiting behind one still being written: it
 * slept on a futex until killed. Here a write that fails during that flush for good
 * (EPIPE, EBADF, ...) drops what is left on that descriptor: nobody can read it.
 */
import pino, { type DestinationStream } from 'pino';
const fs = process.getBuiltinModule('node:fs');

/** Errors after which the same write may work later (SonicBoom retries these itself). */
const RETRYABLE = new Set(['EAGAIN', 'EBUSY']);

type WriteSync = typeof fs.writeSync;

/** The length a write of `data` would have written, for SonicBoom's bookkeeping when it is dropped. */
function lengthOf(data: unknown, encoding: unknown): number {
  if (typeof data === 'string') return Buffer.byteLength(data, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8');
  return ArrayBuffer.isView(data) ? data.byteLength : 0;
}

/** `pino.destination({ fd, sync: false })` whose exit-time flush gives up on a descriptor that cannot be written any more. */
export function exitSafeDestination(fd: number): DestinationStream {
  const destination = pino.destination({ fd, sync: false });
  const flushSync = destination.flushSync.bind(destination);
  destination.flushSync = () => {
    const writeSync = fs.writeSync;
    let broken = false;
    const guarded = (...args: Parameters<WriteSync>): number => {
      if (args[0] !== fd) return writeSync(...args);
      if (broken) return lengthOf(args[1], args[2]);
      try {
        return writeSync(...args);
      } catch (error) {
        if (RETRYABLE.has((error as NodeJS.ErrnoException).code ?? '')) throw error;
        broken = true;
        return lengthOf(args[1], args[2]);
      }
    };
    // SonicBoom calls fs.writeSync through the module object; only for this flush, then put back.
    fs.writeSync = guarded as WriteSync;
    try {
      flushSync();
    } finally {
      fs.writeSync = writeSync;
    }
  };
  return destination;
}
