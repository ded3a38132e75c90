/**
 * The status ids the product sets itself, named once by what they mean (the reference table in status-codes.ts
 * gives each its spec name). Workflows, activities and services take them from here, so one code never goes by
 * two names; test/status-ids.test.ts checks each against the table.
 */
export const StatusId = {
  /** Waiting on the cardholder: a 3-D Secure challenge was issued. */
  SUBMITTED: 1789,
  /** The processor knows the attempt's reference from another payment (other amount, card or merchant). */
  DUPLICATE_AT_PROCESSOR: 3645,
  /** An authorization made with `capture: false`, still held (spec 7.5). */
  PREAUTHORIZED: 3367,
  VOIDED: 4166,
  THREE_DS_FAILED: 4172,
  /** The processor no longer holds the authorization: it expired, was voided or was captured already. */
  AUTHORIZATION_EXPIRED_OR_ALREADY_CAPTURED: 4175,
  TRANSACTION_NOT_FOUND: 4264,
  /** The processor's answer never came (or nothing could be learnt from it). */
  SYSTEM_TIMEOUT: 4285,
  PROCESSOR_CONFIGURATION_INVALID: 4292,
  CREDIT_EXCEEDS_ORIGINAL_AMOUNT: 4313,
} as const;
