/**
 * @module harness/management/store/endpoint-rules
 * The checks an endpoint must pass against its template, on create and on every
 * update (the merged result is checked, since a patch may change either side).
 */
import { ServerlessWorkerError } from 'serverless-worker/internal';
import type { ComputeType, Template } from '../schemas/index.js';

export interface EndpointShape {
  templateId: string;
  computeType: ComputeType;
  gpuTypeIds: readonly string[];
  workersMin: number;
  workersMax: number;
}

/**
 * The compute type an endpoint gets when its create input names none: CPU for a CPU
 * template, else GPU. Only a default: a template's category files it (spec 2.1: "used
 * to filter templates in the UI") and never decides what an endpoint may run on.
 */
export function computeTypeFor(template: Template): ComputeType {
  return template.category === 'CPU' ? 'CPU' : 'GPU';
}

/**
 * Throw SW_INVALID_ENDPOINT unless `endpoint` can run on `template`: a Serverless
 * template, no GPU types on a CPU endpoint, workersMin <= workersMax. A template created
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
  // No check of computeType against template.category: the service accepts a CPU endpoint
  // on a template left at the default category (NVIDIA), and so does the harness.
  if (endpoint.computeType === 'CPU' && endpoint.gpuTypeIds.length > 0) {
    throw new ServerlessWorkerError(
      'SW_INVALID_ENDPOINT',
      `Invalid endpoint: gpuTypeIds must be empty for a CPU endpoint (computeType CPU; got ${JSON.stringify(endpoint.gpuTypeIds)}); set computeType GPU to run on GPUs`,
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
