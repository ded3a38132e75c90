import { Ajv, type ErrorObject } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { TSchema } from '@sinclair/typebox';
import { addressList, parseAddress } from './addresses.ts';
import { emailValidationError } from './email-errors.ts';
import { BatchEmailRequest, SendEmailRequest, UUID_PATTERN, type BatchEmailItem } from './email-request.schema.ts';
import { EMAIL_LIMITS } from './limits.ts';
import { plainTextProblem } from './plain-text.ts';
import { RenderedTooLargeError, STRING_TEMPLATE_LIMITS, type StringTemplateCompiler } from './string-templates.ts';
import { REACT_TEMPLATE_NAMES, REACT_TEMPLATES, isReactTemplateName, type ReactTemplateName } from './templates/react-templates.ts';
import { nestingDepth } from '../validation/nesting-depth.ts';

export type EmailTemplate = { readonly type: 'react'; readonly name: ReactTemplateName } | { readonly type: 'string'; readonly content: string };

/** One e-mail as accepted: every address checked, the template known and its data fit for it. */
export interface EmailMessage {
  /**
   * Addresses rewritten canonically from their parsed name and address (`Shop <a@shop.com>`), never the caller's
   * string as written; the delivery parses them again into name and address for SMTP.
   */
  readonly from: string;
  /** Lower-case domain of `from`, which must be authorized for the tenant. */
  readonly fromDomain: string;
  readonly to: readonly string[];
  readonly cc: readonly string[];
  readonly bcc: readonly string[];
  readonly replyTo: string | null;
  readonly subject: string;
  readonly template: EmailTemplate;
  readonly data: Readonly<Record<string, unknown>>;
}

export interface ParsedEmailRequest {
  readonly tenantKey: string;
  readonly idempotencyKey: string | undefined;
  readonly messages: readonly EmailMessage[];
}

type Details = Record<string, string>;

// ajv-formats ships CommonJS with a default export under ESM interop.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

/** Fields that would name a template somewhere else than the request; refused with the rule, not as unknown. */
const FILE_FIELDS = new Set(['templatePath', 'templateFile', 'templateUrl', 'file', 'path']);
const LOOKS_LIKE_FILE = /[/\\]|\.(html?|hbs|handlebars|tsx?|jsx?|mjml)$/i;
const NOT_FROM_FILES = 'loading templates from files is not supported; use a built-in templateName or send the HTML in templateContent';

/** Like the REST bodies' validator (no coercion, nothing dropped), but reporting every error: details name each field. */
const strictAllErrors = addFormats(new Ajv({ coerceTypes: false, removeAdditional: false, useDefaults: false, allErrors: true, strict: false }));
const validators = new Map<TSchema, ReturnType<typeof strictAllErrors.compile>>();
function validatorOf(schema: TSchema) {
  let validate = validators.get(schema);
  if (!validate) {
    validate = strictAllErrors.compile(schema);
    validators.set(schema, validate);
  }
  return validate;
}

function pathOf(instancePath: string, prefix: string): string {
  const path = instancePath
    .split('/')
    .filter(Boolean)
    .map((part) => (/^\d+$/.test(part) ? `[${part}]` : `.${part.replaceAll('~1', '/').replaceAll('~0', '~')}`))
    .join('');
  return `${prefix}${path}`.replace(/^\./, '') || 'body';
}

/** Every schema error as `field: sentence`; one sentence per field (the first), unions said once. */
function schemaDetails(errors: readonly ErrorObject[], prefix: string): Details {
  // Without a prototype: a field named `constructor` or `__proto__` is named like any other.
  const details: Details = Object.create(null) as Details;
  const put = (field: string, message: string) => {
    if (!Object.hasOwn(details, field)) details[field] = message;
  };
  const unions = new Set(errors.filter((e) => e.keyword === 'anyOf').map((e) => e.instancePath));
  for (const error of errors) {
    const at = pathOf(error.instancePath, prefix);
    const child = (name: string) => (at === 'body' ? name : `${at}.${name}`);
    switch (error.keyword) {
      case 'required':
        put(child((error.params as { missingProperty: string }).missingProperty), 'is required');
        break;
      case 'additionalProperties': {
        const name = (error.params as { additionalProperty: string }).additionalProperty;
        put(child(name), FILE_FIELDS.has(name) ? NOT_FROM_FILES : 'is not a known field');
        break;
      }
      case 'anyOf':
        put(at, at.endsWith('to') || at.endsWith('cc') || at.endsWith('bcc') ? `must be an address or an array of at most ${EMAIL_LIMITS.recipientsPerEmail} addresses` : 'has an invalid value');
        break;
      case 'pattern':
        put(at, (error.params as { pattern: string }).pattern === UUID_PATTERN ? 'must be a UUID such as 123e4567-e89b-12d3-a456-426614174000' : (error.message ?? 'is invalid'));
        break;
      case 'enum':
        put(at, `must be one of: ${(error.params as { allowedValues: string[] }).allowedValues.join(', ')}`);
        break;
      case 'dependencies': {
        const { property, missingProperty } = error.params as { property: string; missingProperty: string };
        put(child(missingProperty), `is required with ${property}`);
        break;
      }
      case 'format':
        put(at, (error.params as { format: string }).format === 'email' ? 'must be an e-mail address' : (error.message ?? 'is invalid'));
        break;
      default:
        // Inside a union the branches' own errors only repeat what the union says.
        if ([...unions].some((u) => error.instancePath === u || error.instancePath.startsWith(`${u}/`))) break;
        put(at, error.message ?? 'is invalid');
    }
  }
  return details;
}

/** The checks a schema cannot express: addresses, recipient count, template choice and its data. */
/** What is left of a request's rendering budget (`EMAIL_LIMITS.requestRenderedLength`) as its e-mails are checked in order. */
interface RenderBudget {
  left: number;
}

function checkMessage(item: BatchEmailItem, prefix: string, compiler: StringTemplateCompiler, details: Details, budget: RenderBudget): EmailMessage | undefined {
  const before = Object.keys(details).length;
  const field = (name: string) => `${prefix}${name}`;
  const from = parseAddress(item.from);
  if (typeof from === 'string') details[field('from')] = from;

  const lists = { to: addressList(item.to), cc: addressList(item.cc), bcc: addressList(item.bcc) };
  if (lists.to.length === 0) details[field('to')] = 'needs at least one recipient';
  const formatted: Record<string, string[]> = { to: [], cc: [], bcc: [] };
  for (const [name, list] of Object.entries(lists)) {
    list.forEach((written, index) => {
      const parsed = parseAddress(written);
      if (typeof parsed === 'string') details[field(`${name}[${index}]`)] ??= parsed;
      else formatted[name]!.push(parsed.formatted);
    });
  }
  // One address per string (checked above), so this counts every envelope recipient.
  const recipients = lists.to.length + lists.cc.length + lists.bcc.length;
  if (recipients > EMAIL_LIMITS.recipientsPerEmail) details[field('to')] ??= `has ${recipients} recipients with cc and bcc; at most ${EMAIL_LIMITS.recipientsPerEmail} are allowed`;
  let replyTo: string | null = null;
  if (item.replyTo !== undefined) {
    const parsed = parseAddress(item.replyTo);
    if (typeof parsed === 'string') details[field('replyTo')] = parsed;
    else replyTo = parsed.formatted;
  }
  if (/[\r\n]/.test(item.subject)) details[field('subject')] = 'must not contain line breaks';

  const data = item.data ?? {};
  let template: EmailTemplate | undefined;
  if (item.templateType === 'react') {
    if (item.templateContent !== undefined) details[field('templateContent')] = 'is only for templateType string';
    const name = item.templateName;
    if (name === undefined) details[field('templateName')] = TEMPLATE_NAME_REQUIRED;
    else if (LOOKS_LIKE_FILE.test(name)) details[field('templateName')] = NOT_FROM_FILES;
    else if (!isReactTemplateName(name)) details[field('templateName')] = `is not a known template; one of ${REACT_TEMPLATE_NAMES.join(', ')}`;
    else {
      const validate = validatorOf(REACT_TEMPLATES[name].data);
      if (!validate(data)) Object.assign(details, schemaDetails(validate.errors ?? [], field('data')));
      template = { type: 'react', name };
    }
  } else {
    if (item.templateName !== undefined) details[field('templateName')] = 'is only for templateType react';
    if (item.templateContent === undefined) details[field('templateContent')] = TEMPLATE_CONTENT_REQUIRED;
    else {
      const compiled = compiler.compile(item.templateContent);
      const bound = typeof compiled === 'function' ? compiled.renderedLengthBound(data) : 0;
      if (typeof compiled !== 'function') details[field('templateContent')] = compiled.problem;
      else if (bound <= STRING_TEMPLATE_LIMITS.maxRenderedLength && bound > budget.left) {
        details[field('templateContent')] = `renders, with the e-mails before it in this request, to more than ${EMAIL_LIMITS.requestRenderedLength} characters together; send fewer e-mails per batch`;
      } else {
        budget.left -= bound;
        // Rendered now with the real data: an output over the limit is refused here, not found by the worker.
        try {
          // The worker derives the plain-text part from this HTML: what it could not convert is refused now.
          const html = compiled(data);
          const problem = plainTextProblem(html);
          // An e-mail of no body at all is a mistake (variables named unlike the data's keys), never sent as one.
          if (html.trim() === '') details[field('templateContent')] = 'renders nothing with this data: an e-mail needs a body (do the variables name keys of data?)';
          else if (problem === undefined) template = { type: 'string', content: item.templateContent };
          else details[field('templateContent')] = `renders HTML whose plain-text part cannot be made with this data: ${problem}`;
        } catch (error) {
          details[field('templateContent')] =
            error instanceof RenderedTooLargeError
              ? `renders to more than ${STRING_TEMPLATE_LIMITS.maxRenderedLength} characters with this data; send less data or fewer placeholders`
              : renderFailure(error);
        }
      }
    }
  }
  if (Object.keys(details).length > before || !template || typeof from === 'string') return undefined;
  return {
    from: from.formatted,
    fromDomain: from.domain,
    to: formatted.to!,
    cc: formatted.cc!,
    bcc: formatted.bcc!,
    replyTo,
    subject: item.subject,
    template,
    data,
  };
}

/**
 * `data` nested deeper than the limit is refused before anything recursive (the validator, the request hash's
 * canonical JSON, the renderers) walks it: thousands of levels would overflow their stacks.
 */
function checkDataDepth(body: unknown): void {
  if (body === null || typeof body !== 'object') return;
  const { data, emails } = body as { data?: unknown; emails?: unknown };
  const details: Details = {};
  const check = (value: unknown, field: string) => {
    if (nestingDepth(value, EMAIL_LIMITS.dataDepth) > EMAIL_LIMITS.dataDepth) details[field] = `nests objects and arrays deeper than ${EMAIL_LIMITS.dataDepth} levels`;
  };
  check(data, 'data');
  if (Array.isArray(emails)) emails.forEach((item, index) => check((item as { data?: unknown } | null)?.data, `emails[${index}].data`));
  if (Object.keys(details).length > 0) throw emailValidationError(details);
}

const TEMPLATE_NAME_REQUIRED = 'is required when templateType is react';
const TEMPLATE_CONTENT_REQUIRED = 'is required when templateType is string';

type RefusedItem = { item: Record<string, unknown>; prefix: string };

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

/** The e-mail of a single send's body the schema refused, if it is an object. */
function refusedSendItems(body: unknown): RefusedItem[] {
  return isObject(body) ? [{ item: body, prefix: '' }] : [];
}

/**
 * The e-mails of a refused batch body: `emails[i]` as far as they are objects. A batch without an `emails` array has
 * none; its own fields are not an e-mail's, so a top-level `templateType` is only an unknown field.
 */
function refusedBatchItems(body: unknown): RefusedItem[] {
  if (!isObject(body) || !Array.isArray(body.emails)) return [];
  return body.emails.flatMap((item, index) => (isObject(item) ? [{ item, prefix: `emails[${index}].` }] : []));
}

/**
 * The template's source a refused body also lacks: the schema cannot say it (which field is required follows
 * `templateType`), so without this a body missing `to` and `templateName` was told only of `to`.
 */
function missingTemplateSource(item: Record<string, unknown>, prefix: string, details: Details): void {
  if (item.templateType === 'react' && item.templateName === undefined) details[`${prefix}templateName`] ??= TEMPLATE_NAME_REQUIRED;
  if (item.templateType === 'string' && item.templateContent === undefined) details[`${prefix}templateContent`] ??= TEMPLATE_CONTENT_REQUIRED;
}

type EmailRequestShape = {
  schema: TSchema;
  /** The e-mails of a body the schema accepted. */
  items: (body: never) => { item: BatchEmailItem; prefix: string }[];
  /** The e-mails, as far as they can be read, of a body the schema refused. */
  refusedItems: (body: unknown) => RefusedItem[];
};

function parse({ schema, items, refusedItems }: EmailRequestShape, body: unknown, compiler: StringTemplateCompiler): ParsedEmailRequest {
  checkDataDepth(body);
  const validate = validatorOf(schema);
  if (!validate(body)) {
    const details = schemaDetails(validate.errors ?? [], '');
    for (const { item, prefix } of refusedItems(body)) missingTemplateSource(item, prefix, details);
    throw emailValidationError(details);
  }
  const details: Details = {};
  const budget: RenderBudget = { left: EMAIL_LIMITS.requestRenderedLength };
  const messages = items(body as never).map(({ item, prefix }) => checkMessage(item, prefix, compiler, details, budget));
  if (Object.keys(details).length > 0) throw emailValidationError(details);
  const { tenant_key, idempotencyKey } = body as { tenant_key: string; idempotencyKey?: string };
  // Echoed as given; the database compares UUIDs whatever their case, and the request hash lower-cases it.
  return { tenantKey: tenant_key, idempotencyKey, messages: messages as EmailMessage[] };
}

const SEND_REQUEST: EmailRequestShape = {
  schema: SendEmailRequest,
  items: (request: SendEmailRequest) => [{ item: request, prefix: '' }],
  refusedItems: refusedSendItems,
};

const BATCH_REQUEST: EmailRequestShape = {
  schema: BatchEmailRequest,
  items: (request: BatchEmailRequest) => request.emails.map((item, index) => ({ item, prefix: `emails[${index}].` })),
  refusedItems: refusedBatchItems,
};

/** Body of `POST /api/email`; throws an EmailRequestError (validation) naming every bad field. */
export function parseSendRequest(body: unknown, compiler: StringTemplateCompiler): ParsedEmailRequest {
  return parse(SEND_REQUEST, body, compiler);
}

/** Body of `POST /api/email/batch`: one bad item refuses the whole batch, its details naming the item's index. */
export function parseBatchRequest(body: unknown, compiler: StringTemplateCompiler): ParsedEmailRequest {
  return parse(BATCH_REQUEST, body, compiler);
}

/**
 * Why a string template could not be rendered, as its author is told: Handlebars' own words for what it refuses, but
 * nothing of a JavaScript engine's error (`Cannot read properties of undefined (reading '0')`, a stack overflow), which
 * names the gateway's internals rather than the template.
 */
function renderFailure(error: unknown): string {
  const engineError = error instanceof TypeError || error instanceof RangeError || error instanceof ReferenceError || !(error instanceof Error);
  return engineError ? 'cannot be rendered with this data' : `cannot be rendered with this data: ${error.message}`.slice(0, 300);
}
