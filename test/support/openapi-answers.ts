import { Ajv2020 } from 'ajv/dist/2020.js';

/**
 * Checks real answers against the gateway's own OpenAPI document (its response schema for the operation and status):
 * the errors ajv reports, none when the answer is documented.
 */
export async function undocumentedParts(baseUrl: string, pathName: string, method: string, status: number, body: unknown): Promise<unknown[]> {
  const document = (await (await fetch(`${baseUrl}/openapi.json`)).json()) as Record<string, unknown>;
  const pointer = `#/paths/${pathName.replaceAll('~', '~0').replaceAll('/', '~1')}/${method}/responses/${status}/content/application~1json/schema`;
  const ajv = new Ajv2020({ strict: false, validateSchema: false, validateFormats: false });
  ajv.addSchema(document, 'openapi.json');
  const validate = ajv.compile({ $ref: `openapi.json${pointer}` });
  return validate(body) ? [] : (validate.errors ?? []);
}
