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
} as const;

/** Routes that need the tenant API key. */
export const API_KEY_REQUIRED = [{ apiKey: [] }];
/** Routes anyone may call: probes, documentation, the 3-D Secure redirect a cardholder's browser follows. */
export const PUBLIC = [];
