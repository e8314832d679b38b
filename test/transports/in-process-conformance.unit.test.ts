import { Harness, ManualClock } from '../../src/harness/index.js';
import { InProcessTransport } from '../../src/transports/index.js';
import { CONFORMANCE_MAX_RESULT_BYTES, describeTransportConformance } from './transport-conformance.js';

describeTransportConformance('in-process', async () => {
  const clock = new ManualClock(Date.now());
  const harness = new Harness({ clock });
  const endpoint = harness.endpoint('conformance');
  const transport = new InProcessTransport({ endpoint, workerId: 'in-process-worker', maxResultBytes: CONFORMANCE_MAX_RESULT_BYTES });
  return {
    transport,
    harness,
    clock,
    endpoint,
    close: async () => {
      await transport.close();
      await harness.close();
    },
  };
});
