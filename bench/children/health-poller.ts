/**
 * @module bench/children/health-poller
 * A /health prober in a process of its own (as a load balancer's or Kubernetes' probe is):
 * every `BENCH_POLL_MS` (default 100) it opens a fresh connection to the URL given as
 * argv[2], sends one GET and reads the answer, never more than one at a time. For each
 * probe it prints one JSON line: `{"at","port","connectMs","firstByteMs","ms","status"}`, times
 * from the probe's start (`at`: Date.now() when it began, to line up with the server's
 * trace). Runs until stdin closes.
 */
import { connect } from 'node:net';

const target = new URL(process.argv[2] ?? '');
const every = Number(process.env.BENCH_POLL_MS ?? '100');
let running = true;
process.stdin.on('close', () => {
  running = false;
});
process.stdin.resume();

function probe(): Promise<Record<string, number>> {
  return new Promise((resolve) => {
    const at = Date.now();
    const started = performance.now();
    let connectMs = -1;
    let port = 0;
    let firstByteMs = -1;
    let text = '';
    const socket = connect({ host: target.hostname, port: Number(target.port) }, () => {
      connectMs = performance.now() - started;
      port = socket.localPort ?? 0;
      socket.write(`GET ${target.pathname} HTTP/1.1\r\nHost: ${target.host}\r\nConnection: close\r\n\r\n`);
    });
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      if (firstByteMs < 0) firstByteMs = performance.now() - started;
      text += chunk;
    });
    const end = () => resolve({ at, port, connectMs, firstByteMs, ms: performance.now() - started, status: Number(/^HTTP\/1\.1 (\d+)/.exec(text)?.[1] ?? 0) });
    socket.on('close', end);
    socket.on('error', () => undefined);
  });
}

while (running) {
  const result = await probe();
  process.stdout.write(`${JSON.stringify(result)}\n`);
  await new Promise((done) => setTimeout(done, every));
}
