import { compile, createStrictAjv, describeSchemaErrors } from '../../domain/validation/json-schema.ts';
import { DomainError } from '../../domain/errors.ts';
import { amountProblemIn } from '../../domain/payments-api/minor-units.ts';
import { isValidEmail, normalizeEmail } from '../../domain/payments/card.ts';
import { ProvisioningFixture } from './fixture.schema.ts';

const validate = compile(createStrictAjv(), ProvisioningFixture);

/** Validates a provisioning fixture; the error names the first bad field by its path. */
export function parseFixture(value: unknown): ProvisioningFixture {
  if (!validate(value)) {
    const first = validate.errors?.[0];
    throw new DomainError('validation', `Invalid fixture: ${first ? describeSchemaErrors(validate.errors!, 'fixture') : 'unknown error'}`);
  }
  value.tenants.forEach((tenant, t) => {
    tenant.webhookEndpoints?.forEach((endpoint, e) => {
      const problem = endpointUrlProblem(endpoint.url);
      if (problem) throw new DomainError('validation', `Invalid fixture: tenants[${t}].webhookEndpoints[${e}].url ${problem}`);
    });
    // A blocked address the submit would never take (a one-letter top-level domain, a comment) would never match.
    tenant.blocklist?.emails?.forEach((email, e) => {
      if (!isValidEmail(normalizeEmail(email))) throw new DomainError('validation', `Invalid fixture: tenants[${t}].blocklist.emails[${e}] is not an address a checkout can give`);
    });
    // A price the currency cannot be charged in: 19.99 JPY (the yen has no minor unit).
    tenant.products?.forEach((product, p) => {
      const amounts = { price: product.price, 'subscriptionPlan.recurringAmount': product.subscriptionPlan?.recurringAmount };
      for (const [field, amount] of Object.entries(amounts)) {
        const problem = amount === undefined ? undefined : amountProblemIn(String(amount), product.currency);
        if (problem) throw new DomainError('validation', `Invalid fixture: tenants[${t}].products[${p}].${field} ${problem}`);
      }
    });
  });
  return value;
}

/**
 * Why a webhook endpoint's URL cannot be delivered to, if it cannot. The schema's `uri` format is laxer than the URL
 * parser deliveries use (a port of 80800 passes it), and `fetch` refuses a URL with credentials in it (they would
 * also be shown in every delivery's error): each would fail every delivery.
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
  if (parsed.port !== '' && BAD_PORTS.has(Number(parsed.port))) return `names port ${parsed.port}, which fetch never connects to (the Fetch standard's bad ports)`;
  return undefined;
}

/** The ports `fetch` refuses to connect to (the Fetch standard, "bad port"): a delivery there fails every time. */
const BAD_PORTS = new Set([
  1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95, 101, 102, 103, 104, 109, 110, 111, 113, 115, 117, 119, 123,
  135, 137, 139, 143, 161, 179, 389, 427, 465, 512, 513, 514, 515, 526, 530, 531, 532, 540, 548, 554, 556, 563, 587, 601, 636, 989, 990, 993, 995,
  1719, 1720, 1723, 2049, 3659, 4045, 4190, 5060, 5061, 6000, 6566, 6665, 6666, 6667, 6668, 6669, 6679, 6697, 10080,
]);
