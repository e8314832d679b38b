/**
 * @module harness/openapi/management-paths
 * The management API's paths (/v1) in the OpenAPI document: list, get, create, update
 * (PATCH and its POST form) and delete of each kind of record, pods read only.
 */
type Schema = Record<string, unknown>;

const json = (ref: string): Schema => ({ 'application/json': { schema: { $ref: ref } } });

/** The management API's routes (/v1, as the platform's REST API): what each kind of record offers. */
const MANAGEMENT_KINDS = [
  { path: 'templates', what: 'template', update: true },
  { path: 'networkvolumes', what: 'network volume', update: true },
  { path: 'endpoints', what: 'endpoint', update: true },
  { path: 'pods', what: 'pod (a launched worker, read only)', update: false },
] as const;

export const MANAGEMENT_TAG = 'management API (/v1)';

/** The /v1 paths of every kind of record. */
export function managementPaths(): Record<string, Schema> {
  const paths: Record<string, Schema> = {};
  const common = { '401': { $ref: '#/components/responses/Unauthorized' } };
  const record = { '200': { description: 'The record.', content: json('#/components/schemas/ManagementRecord') } };
  const notFound = { '404': { description: 'No such record.', content: json('#/components/schemas/Error') } };
  const id = { name: 'id', in: 'path', required: true, schema: { type: 'string' } };
  const body = { required: true, content: { 'application/json': { schema: { type: 'object' } } } };
  for (const kind of MANAGEMENT_KINDS) {
    const op = (verb: string, summary: string, extra: Schema) => ({ tags: [MANAGEMENT_TAG], operationId: `${verb}_${kind.path}`, summary, ...extra });
    const list: Schema = {
      get: op('list', `Every ${kind.what}.`, {
        responses: {
          '200': {
            description: 'The records.',
            content: { 'application/json': { schema: { type: 'array', items: { $ref: '#/components/schemas/ManagementRecord' } } } },
          },
          ...common,
        },
      }),
    };
    const one: Schema = { get: op('get', `One ${kind.what}.`, { parameters: [id], responses: { ...record, ...notFound, ...common } }) };
    if (kind.update) {
      list.post = op('create', `Create a ${kind.what}.`, {
        requestBody: body,
        responses: { ...record, '400': { $ref: '#/components/responses/BadRequest' }, ...common },
      });
      one.patch = op('update', `Change a ${kind.what}'s fields.`, { parameters: [id], requestBody: body, responses: { ...record, ...notFound, ...common } });
      one.delete = op('delete', `Delete a ${kind.what}.`, { parameters: [id], responses: { '204': { description: 'Deleted.' }, ...notFound, ...common } });
      paths[`/v1/${kind.path}/{id}/update`] = {
        post: op('update_post', `Change a ${kind.what}'s fields (POST form of PATCH).`, {
          parameters: [id],
          requestBody: body,
          responses: { ...record, ...notFound, ...common },
        }),
      };
    }
    paths[`/v1/${kind.path}`] = list;
    paths[`/v1/${kind.path}/{id}`] = one;
  }
  return paths;
}
