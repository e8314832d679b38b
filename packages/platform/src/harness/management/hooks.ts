/**
 * @module harness/management/hooks
 * How the management API reaches the rest of the harness without importing it: the
 * job harness learns of created and deleted endpoints through `EndpointHooks`, and
 * the worker registry shows connected workers as pods through `PodsView`.
 */
import type { Endpoint, Pod } from './schemas/index.js';

/** Told about endpoints, so that `/v2/{id}` starts (and stops) serving them. */
export interface EndpointHooks {
  /**
   * Called after POST /endpoints stored the endpoint, before the reply. If it throws,
   * the endpoint is removed again and the error is the reply.
   */
  onEndpointCreated(id: string, endpoint: Endpoint): void;
  /** Called after an update of the endpoint was stored (its settings may have changed). */
  onEndpointUpdated?(endpoint: Endpoint): void;
  /** Called after DELETE /endpoints/{id} removed the endpoint. */
  onEndpointDeleted?(id: string): void;
}

/** Read access to the connected workers, each seen as a pod. */
export interface PodsView {
  /** Every connected worker. */
  listPods(): Pod[] | Promise<Pod[]>;
  /** One worker by id, or undefined. */
  getPod(id: string): Pod | undefined | Promise<Pod | undefined>;
}
