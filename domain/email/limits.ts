/** The e-mail API's limits (DESIGN 4, "e-mail limits"); the request schema and the parsers read them from here. */
export const EMAIL_LIMITS = {
  /** E-mails in one batch request. */
  batchSize: 100,
  /** Recipients of one e-mail, to + cc + bcc together. */
  recipientsPerEmail: 50,
  /** Bytes of one request body. */
  requestBytes: 256 * 1024,
  idempotencyKeyLength: { min: 1, max: 256 },
  /** Characters of a subject (RFC 5322 allows 998 per line; a subject is one line). */
  subjectLength: 998,
  /** Characters of one address as written, display name included. */
  addressLength: 320,
  /** Levels of objects and arrays in `data` (the object itself is level 1). */
  dataDepth: 32,
  /** Characters of a string template's `templateContent`. */
  templateContentLength: 100 * 1024,
  /**
   * Characters the string templates of one request may render to together (each also at most 1 MiB alone): a batch
   * of 100 e-mails each just under the single limit was 100 MB of rendering on the gateway's main thread, twice (its
   * check and its delivery), stalling card payments for seconds. 5 MiB leaves about 50 KB for each e-mail of a full batch.
   */
  requestRenderedLength: 5 * 1024 * 1024,
} as const;

/** How long an idempotency key answers repeats (spec 8). */
export const EMAIL_IDEMPOTENCY_DAYS = 7;
