/**
 * @module harness/management/store/endpoint-rules
 * The checks an endpoint must pass against its template, on create and on every
 * update (the merged result is checked, since a patch may change either side).
 */
import { ServerlessWorkerError } from '../../../job/index.js';
import type { ComputeType, Template } from '../schemas/index.js';

export interface EndpointShape {
  templateId: string;
  computeType: ComputeType;
  gpuTypeIds: readonly string[];
  workersMin: number;
  workersMax: number;
}

/** The compute type an endpoint gets when its input names none: CPU for a CPU template, else GPU. */
export function computeTypeFor(template: Template): ComputeType {
  return template.category === 'CPU' ? 'CPU' : 'GPU';
}

/**
 * Throw SW_INVALID_ENDPOINT unless `endpoint` can run on `template`. A template created
 * without `isServerless` (`serverlessUnset`) may back an endpoint (the caller warns);
 * one created with `isServerless: false` may not.
 */
export function checkEndpointFitsTemplate(endpoint: EndpointShape, template: Template, serverlessUnset = false): void {
  if (!template.isServerless && !serverlessUnset) {
    throw new ServerlessWorkerError(
      'SW_INVALID_ENDPOINT',
      `Invalid endpoint: templateId "${template.id}" is a Pod template (isServerless false); endpoints need a template created with isServerless true`,
      { field: 'templateId', templateId: template.id },
    );
  }
  if (computeTypeFor(template) !== endpoint.computeType) {
    throw new ServerlessWorkerError(
      'SW_INVALID_ENDPOINT',
      `Invalid endpoint: computeType ${endpoint.computeType} does not fit the ${template.category} template "${template.id}" (expected ${computeTypeFor(template)})`,
      { field: 'computeType', templateId: template.id },
    );
  }
  if (endpoint.computeType === 'CPU' && endpoint.gpuTypeIds.length > 0) {
    throw new ServerlessWorkerError(
      'SW_INVALID_ENDPOINT',
      `Invalid endpoint: gpuTypeIds must be empty for the CPU template "${template.id}" (got ${JSON.stringify(endpoint.gpuTypeIds)})`,
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
