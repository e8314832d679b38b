/**
 * @module harness/management/store/endpoint-rules
 * The checks an endpoint must pass against its template, on create and on every
 * update (the merged result is checked, since a patch may change either side).
 */
import { ServerlessWorkerError } from '../../../job/index.js';
import type { Template } from '../schemas/index.js';

export interface EndpointShape {
  templateId: string;
  gpuTypeIds: readonly string[];
  workersMin: number;
  workersMax: number;
}

/** Throw SW_INVALID_ENDPOINT unless `endpoint` can run on `template`. */
export function checkEndpointFitsTemplate(endpoint: EndpointShape, template: Template): void {
  if (!template.isServerless) {
    throw new ServerlessWorkerError(
      'SW_INVALID_ENDPOINT',
      `Invalid endpoint: templateId "${template.id}" is a Pod template (isServerless false); endpoints need a template created with isServerless true`,
      { field: 'templateId', templateId: template.id },
    );
  }
  if (template.category === 'CPU' && endpoint.gpuTypeIds.length > 0) {
    throw new ServerlessWorkerError(
      'SW_INVALID_ENDPOINT',
      `Invalid endpoint: gpuTypeIds must be empty for the CPU template "${template.id}" (got ${JSON.stringify(endpoint.gpuTypeIds)})`,
      { field: 'gpuTypeIds', templateId: template.id },
    );
  }
  if (template.category !== 'CPU' && endpoint.gpuTypeIds.length === 0) {
    throw new ServerlessWorkerError(
      'SW_INVALID_ENDPOINT',
      `Invalid endpoint: gpuTypeIds must list at least one GPU type, in priority order, for the ${template.category} template "${template.id}" (got [])`,
      { field: 'gpuTypeIds', templateId: template.id },
    );
  }
  if (endpoint.workersMin > endpoint.workersMax) {
    throw new ServerlessWorkerError(
      'SW_INVALID_ENDPOINT',
      `Invalid endpoint: workersMin must not be greater than workersMax (got workersMin ${endpoint.workersMin}, workersMax ${endpoint.workersMax})`,
      { field: 'workersMin' },
    );
  }
}
