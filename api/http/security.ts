/**
 * How callers authenticate, as the OpenAPI document states it. One apiKey scheme covers both
 * accepted forms of the header (`<key>` and `Bearer <key>`): an `http bearer` scheme would
 * document only the second.
 */
export const securitySchemes = {
  apiKey: {
    type: 'apiKey',
    in: 'header',
    name: 'Authorization',
    description: 'The tenant API key, sent as `Authorization: <key>` or `Authorization: Bearer <key>`.',
  },
  leadSecretKey: {
    type: 'http',
    scheme: 'bearer',
    description: "An application's secret lead key (`sk_test_…`/`sk_live_…`), from servers only.",
  },
  leadPublishableKey: {
    type: 'apiKey',
    in: 'header',
    name: 'X-Service-Lead-Key',
    description: "An application's publishable lead key (`pk_test_…`/`pk_live_…`), from browsers on an allowed `Origin`.",
  },
} as const;

/** Routes that need the tenant API key. */
export const API_KEY_REQUIRED = [{ apiKey: [] }];
/** Lead writes: a server's secret key, or a browser's publishable key. */
export const LEAD_WRITE: Record<string, string[]>[] = [{ leadSecretKey: [] }, { leadPublishableKey: [] }];
/** Lead reads: the secret key only. */
export const LEAD_READ = [{ leadSecretKey: [] }];
/** Routes anyone may call: probes, documentation, the 3-D Secure redirect a cardholder's browser follows. */
export const PUBLIC = [];
