import { Harness, ManualClock } from '../../src/harness/index.js';
import { InProcessTransport } from '../../src/transports/index.js';
import { describeTransportConformance } from './transport-conformance.js';

describeTransportConformance('in-process', async () => {
  const clock = new ManualClock(Date.now());
  const harness = new Harness({ clock });
  const endpoint = harness.endpoint('conformance');
  const transport = new InProcessTransport({ endpoint, workerId: 'in-process-worker' });
  return {
    transport,
    harness,
    clock,
    endpoint,
    close: async () => {
      await transport.close();
      harness.close();
    },
  };
});
