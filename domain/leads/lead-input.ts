import { LEAD_LIMITS, TRACKING_FIELD_NAME, type LeadScan, type LeadWrite } from './lead.ts';
import { holdsCardNumber, isCardNumberAlone } from '../payments/card-echo.ts';
import { LeadValidationError } from './lead-errors.ts';
import { findHostileValue, HOSTILE_VALUE_PROBLEM } from '../validation/hostile-text.ts';
import { nestingDepth } from '../validation/nesting-depth.ts';
import { fitsCharacters } from '../validation/characters.ts';
import { DUPLICATE_KEY_PROBLEM, firstDuplicateKey } from '../validation/duplicate-keys.ts';

/** Fields only the gateway writes (spec 2.4 rule 2): a client sending one is told so, by name. */
const GATEWAY_FIELDS = new Set([
  'tenant_id',
  'status',
  'id',
  'application_id',
  'environment',
  'transaction_id',
  'order_id',
  'amount',
  'currency',
  'subscription_id',
  'paid_at',
  'created_at',
  'updated_at',
]);

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

type Problems = string[];

/** Said of a `null`: an update keeps what a field left out holds, so a `null` that looked like clearing it is refused. */
const NULL_PROBLEM = 'must be a string; leave the field out to keep what the lead holds';

function optionalString(body: Record<string, unknown>, name: string, max: number, problems: Problems): string | undefined {
  const value = body[name];
  if (value === undefined) return undefined;
  if (value === null) problems.push(`${name}: ${NULL_PROBLEM}`);
  else if (typeof value !== 'string') problems.push(`${name}: must be a string`);
  else if (!fitsCharacters(value, max)) problems.push(`${name}: must be at most ${max} characters`);
  else return value;
  return undefined;
}

function requiredString(body: Record<string, unknown>, name: string, max: number, problems: Problems): string {
  const value = body[name];
  if (value === undefined || value === null) {
    problems.push(`${name}: is required`);
    return '';
  }
  if (typeof value !== 'string') problems.push(`${name}: must be a string`);
  else if (value.length < 1 || !fitsCharacters(value, max)) problems.push(`${name}: must be 1 to ${max} characters`);
  // Spaces alone name no customer and no session: a lead nobody could find again by it.
  else if (value.trim() === '') problems.push(`${name}: must not be blank`);
  return typeof value === 'string' ? value : '';
}

function scansOf(value: unknown, problems: Problems): LeadScan[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value)) {
    problems.push('scans: must be an array of objects with a page');
    return undefined;
  }
  if (value.length > LEAD_LIMITS.scans) {
    // Said once: the items of a list too long are not checked one by one (an answer would outgrow the request).
    problems.push(`scans: at most ${LEAD_LIMITS.scans} items`);
    return undefined;
  }
  value.forEach((scan: unknown, index) => {
    if (typeof scan !== 'object' || scan === null || Array.isArray(scan)) problems.push(`scans[${index}]: must be an object`);
    else if (typeof (scan as { page?: unknown }).page !== 'string') problems.push(`scans[${index}].page: must be a string`);
    else if (!fitsCharacters((scan as { page: string }).page, LEAD_LIMITS.scanPage)) problems.push(`scans[${index}].page: must be at most ${LEAD_LIMITS.scanPage} characters`);
    else storableJson(scan, `scans[${index}]`, problems);
  });
  return value as LeadScan[];
}

/** `pending_data_b64`: standard base64 (padded, no URL alphabet) of the UTF-8 JSON text of an object. */
function pendingDataOf(value: unknown, problems: Problems): Record<string, unknown> | undefined {
  const name = 'pending_data_b64';
  if (value === undefined) return undefined;
  if (value === null) {
    problems.push(`${name}: ${NULL_PROBLEM}`);
    return undefined;
  }
  if (typeof value !== 'string' || !BASE64.test(value)) {
    problems.push(`${name}: must be standard base64`);
    return undefined;
  }
  const bytes = Buffer.from(value, 'base64');
  if (bytes.length > LEAD_LIMITS.pendingDataBytes) {
    problems.push(`${name}: decodes to more than ${LEAD_LIMITS.pendingDataBytes} bytes`);
    return undefined;
  }
  let parsed: unknown;
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    parsed = JSON.parse(text);
  } catch {
    problems.push(`${name}: must be base64 of valid JSON`);
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    problems.push(`${name}: must be base64 of a JSON object`);
    return undefined;
  }
  if (!storableJson(parsed, name, problems)) return undefined;
  // As a body's own fields: a field given twice would be read as its last here and maybe as its first by the
  // checkout that reads the pending data back. Looked for once the names are known storable (no NUL or card number
  // is echoed in the path that names it).
  const duplicate = duplicateKeyOf(text);
  if (duplicate !== undefined) {
    problems.push(`${name}.${duplicate}: ${DUPLICATE_KEY_PROBLEM}`);
    return undefined;
  }
  return parsed as Record<string, unknown>;
}

/** The first field given twice in the decoded pending data; a text nested too deep to walk is left to the depth limit. */
function duplicateKeyOf(text: string): string | undefined {
  try {
    return firstDuplicateKey(text);
  } catch (error) {
    if (error instanceof RangeError) return undefined;
    throw error;
  }
}

/**
 * Free-form JSON the lead keeps as it is (a scan's extra fields, the pending data): no deeper than the limit, which
 * keeps the recursive JSON writers off a stack overflow, and no text PostgreSQL refuses (NUL bytes, half surrogate
 * pairs). The edge checks the body's own text; the pending data's is only seen once decoded.
 */
function storableJson(value: unknown, name: string, problems: Problems): boolean {
  if (nestingDepth(value, LEAD_LIMITS.jsonDepth) > LEAD_LIMITS.jsonDepth) {
    problems.push(`${name}: nests objects and arrays deeper than ${LEAD_LIMITS.jsonDepth} levels`);
    return false;
  }
  const hostile = findHostileValue(value, name);
  if (hostile !== undefined) {
    problems.push(`${hostile.path}: ${HOSTILE_VALUE_PROBLEM[hostile.kind]}`);
    return false;
  }
  const inexact = firstInexactInteger(value, name);
  if (inexact !== undefined) {
    problems.push(`${inexact}: an integer beyond ±${Number.MAX_SAFE_INTEGER} cannot be kept exactly; send it as text`);
    return false;
  }
  return true;
}

/**
 * The path of the first integer beyond ±2^53 in free-form JSON (its depth already bounded): it parsed to a nearby
 * number, not the one sent, and would be kept and answered changed (`12345678901234567890` as `…67000`).
 */
function firstInexactInteger(value: unknown, path: string): string | undefined {
  if (typeof value === 'number') return Number.isInteger(value) && !Number.isSafeInteger(value) ? path : undefined;
  const entries: [string, unknown][] = Array.isArray(value)
    ? value.map((item, index) => [`${path}[${index}]`, item])
    : value !== null && typeof value === 'object'
      ? Object.entries(value).map(([key, item]) => [`${path}.${key}`, item])
      : [];
  for (const [itemPath, item] of entries) {
    const found = firstInexactInteger(item, itemPath);
    if (found !== undefined) return found;
  }
  return undefined;
}

/**
 * A lead write body (spec 2.4) as a `LeadWrite`, or a `LeadValidationError` naming every bad field: wrong types and
 * lengths, gateway-only fields (`tenant_id`, `status`, payment identifiers), unknown fields. CFA and D2D fields
 * are any `cfa_*` / `d2d_*` name with a string value, at most 50 per request.
 */
export function parseLeadWrite(body: unknown): LeadWrite {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new LeadValidationError(['body: must be a JSON object']);
  const fields = body as Record<string, unknown>;
  const problems: Problems = [];
  const trackingFields: Record<string, string> = {};
  const known = new Set(['email', 'first_name', 'last_name', 'phone', 'session_id', 'scans', 'pending_data_b64']);
  for (const [name, value] of Object.entries(fields)) {
    if (known.has(name)) continue;
    if (GATEWAY_FIELDS.has(name)) problems.push(`${name}: cannot be set by clients`);
    else if (name === 'pending_data') problems.push('pending_data: send it as pending_data_b64 (standard base64 of a JSON object)');
    else if (TRACKING_FIELD_NAME.test(name)) {
      if (typeof value !== 'string') problems.push(`${name}: must be a string`);
      else if (!fitsCharacters(value, LEAD_LIMITS.trackingFieldValue)) problems.push(`${name}: must be at most ${LEAD_LIMITS.trackingFieldValue} characters`);
      else trackingFields[name] = value;
    } else if (/^(cfa|d2d)_/.test(name)) problems.push(`${name.slice(0, LEAD_LIMITS.trackingFieldName)}: a CFA/D2D field name is the prefix and 1 to 60 of a-z, 0-9, _`);
    else problems.push(`${name.slice(0, LEAD_LIMITS.trackingFieldName)}: unknown field`);
  }
  const trackingCount = Object.keys(fields).filter((name) => /^(cfa|d2d)_/.test(name)).length;
  if (trackingCount > LEAD_LIMITS.trackingFields) problems.push(`cfa_*/d2d_*: at most ${LEAD_LIMITS.trackingFields} fields per request`);

  const lead: LeadWrite = {
    email: requiredString(fields, 'email', LEAD_LIMITS.email, problems),
    sessionId: requiredString(fields, 'session_id', LEAD_LIMITS.sessionId, problems),
    firstName: optionalString(fields, 'first_name', LEAD_LIMITS.name, problems),
    lastName: optionalString(fields, 'last_name', LEAD_LIMITS.name, problems),
    phone: optionalString(fields, 'phone', LEAD_LIMITS.phone, problems),
    scans: scansOf(fields.scans, problems),
    pendingData: pendingDataOf(fields.pending_data_b64, problems),
    trackingFields,
  };
  // What the shopper types (a name, a phone) is never kept holding a card number pasted into it, as at the card submit;
  // a phone has at most 15 digits (E.164), so only a longer run in it can be a card (a 15-digit Amex passes).
  const typed = [['first_name', lead.firstName, undefined], ['last_name', lead.lastName, undefined], ['phone', lead.phone, 16]] as const;
  for (const [name, text, minDigits] of typed) if (text !== undefined && holdsCardNumber(text, minDigits)) problems.push(`${name}: must not hold a card number`);
  // The e-mail has no format to fail (the lead keeps, shows and sends it as written): a card number typed in its place
  // is refused; digits inside an address (a timestamp tag) are the shopper's.
  if (isCardNumberAlone(lead.email)) problems.push('email: must not hold a card number');
  if (problems.length > 0) throw new LeadValidationError(problems);
  return lead;
}
