import { Harness, ManualClock } from '../../src/harness/index.js';
import { createLogger } from '../../src/log/index.js';
import { createPlatformTransport } from '../../src/transports/platform/index.js';
import { startWorkerApiServer } from '../harness/http/worker-api/worker-api-server.js';
import { CONFORMANCE_MAX_RESULT_BYTES, describeTransportConformance } from './transport-conformance.js';

const silent = createLogger({ level: 'silent' });

describeTransportConformance('platform (HTTP against the harness worker API)', async () => {
  const clock = new ManualClock(Date.now());
  const harness = new Harness({ clock });
  // Liveness off: the manual clock jumps by minutes in the timeout tests.
  const server = await startWorkerApiServer({ harness, liveness: false, longPollMs: 5_000, apiKey: 'conformance-key' });
  const workerId = 'platform-worker';
  const transport = createPlatformTransport({
    processEnv: { ...server.envFor('conformance', 100), RUNPOD_POD_ID: workerId },
    logger: silent,
    emptyPollGapMs: 0,
    maxResultBytes: CONFORMANCE_MAX_RESULT_BYTES,
  });
  return {
    transport,
    harness,
    clock,
    endpoint: harness.endpoint('conformance'),
    reportedJobs: () => server.seen.pings.filter((ping) => ping.workerId === workerId).at(-1)?.jobIds,
    close: async () => {
      await transport.close();
      await server.close();
    },
  };
});
