/**
 * GET /pods and GET /pods/{podId}: connected workers seen as pods through the
 * optional PodsView; without one, an empty list and 404 SW_POD_NOT_FOUND.
 */
import { describe, expect, it } from 'vitest';
import type { Pod, PodsView } from '../../../packages/platform/src/harness/management/index.js';
import { caller, type ErrorBody } from './http.js';
import { startManagementServer } from './management-server.js';

const POD: Pod = {
  id: 'worker-1',
  name: 'echo worker 1',
  desiredStatus: 'RUNNING',
  endpointId: 'abcdefghijklmn',
  imageName: 'ghcr.io/org/worker:1',
  publicIp: '203.0.113.7',
  ports: ['8000/http', '22/tcp'],
  portMappings: { '22': 40122 },
  gpu: { typeId: 'NVIDIA GeForce RTX 4090', count: 1 },
  jobsInProgress: ['job-1'],
  createdAt: '2026-01-01T00:00:00.000Z',
  lastSeenAt: '2026-01-01T00:00:05.000Z',
};

/** A fixed registry of one connected worker. */
const view: PodsView = {
  listPods: () => [POD],
  getPod: (id) => (id === POD.id ? POD : undefined),
};

describe('with a PodsView', () => {
  it('lists pods and reads one, with its public IP and mapped TCP ports', async () => {
    const server = await startManagementServer({ apiKey: 'k', podsView: view });
    try {
      const call = caller(server.baseUrl, 'k');
      expect((await call('GET', '/pods')).body).toEqual([POD]);
      const one = await call<Pod>('GET', `/pods/${POD.id}`);
      expect(one.status).toBe(200);
      expect(one.body).toEqual(POD);
      const missing = await call<ErrorBody>('GET', '/pods/worker-2');
      expect(missing.status).toBe(404);
      expect(missing.body.error.code).toBe('SW_POD_NOT_FOUND');
      expect(missing.body.error.message).toContain('worker-2');
    } finally {
      await server.close();
    }
  });
});

describe('without a PodsView', () => {
  it('answers an empty list and 404 for every id', async () => {
    const server = await startManagementServer();
    try {
      const call = caller(server.baseUrl);
      expect((await call('GET', '/pods')).body).toEqual([]);
      const reply = await call<ErrorBody>('GET', '/pods/anything');
      expect(reply.status).toBe(404);
      expect(reply.body.error.code).toBe('SW_POD_NOT_FOUND');
    } finally {
      await server.close();
    }
  });
});
