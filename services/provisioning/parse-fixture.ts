import { compile, createStrictAjv, describeSchemaError } from '../../domain/validation/json-schema.ts';
import { DomainError } from '../../domain/errors.ts';
import { ProvisioningFixture } from './fixture.schema.ts';

const validate = compile(createStrictAjv(), ProvisioningFixture);

/** Validates a provisioning fixture; the error names the first bad field by its path. */
export function parseFixture(value: unknown): ProvisioningFixture {
  if (!validate(value)) {
    const first = validate.errors?.[0];
    throw new DomainError('validation', `Invalid fixture: ${first ? describeSchemaError(first, 'fixture') : 'unknown error'}`);
  }
  value.tenants.forEach((tenant, t) =>
    tenant.webhookEndpoints?.forEach((endpoint, e) => {
      const problem = endpointUrlProblem(endpoint.url);
      if (problem) throw new DomainError('validation', `Invalid fixture: tenants[${t}].webhookEndpoints[${e}].url ${problem}`);
    }),
  );
  return value;
}

/**
 * Why a webhook endpoint's URL cannot be delivered to, if it cannot. The schema's `uri` format is laxer than the URL
 * parser deliveries use (a port of 80800 passes it), and `fetch` refuses a URL with credentials in it (they would
 * also be shown in every delivery's error): each would fail every delivery, and the first also every GraphQL read of
 * the tenant's endpoints (its URL scalar refuses it).
 */
function endpointUrlProblem(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'is not a URL a delivery can reach';
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return 'is not a URL a delivery can reach';
  if (parsed.username !== '' || parsed.password !== '') return 'must not hold a user name or password';
  return undefined;
}
