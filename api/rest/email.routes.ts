import { Type } from '@sinclair/typebox';
import type { EmailDispatcher } from '../../domain/email/email-dispatcher.ts';
import { BatchEmailRequest, SendEmailRequest } from '../../domain/email/email-request.schema.ts';
import { EMAIL_LIMITS } from '../../domain/email/limits.ts';
import type { StringTemplateCompiler } from '../../domain/email/string-templates.ts';
import { acceptEmails, type EmailRateLimit } from '../../services/email/accept-emails.ts';
import { ref } from '../http/schemas.ts';
import { PUBLIC } from '../http/security.ts';
import type { TypedApp } from '../http/typed-app.ts';
import { EmailErrorResponse, sendEmailError } from './email-errors.ts';

export const EMAIL_PATH = '/api/email';
export const EMAIL_BATCH_PATH = '/api/email/batch';

const SendEmailResponse = Type.Object(
  {
    success: Type.Literal(true),
    message: Type.String(),
    data: Type.Object({
      message: Type.String(),
      id: Type.String({ format: 'uuid', description: 'Id of the e-mail (GraphQL `email(id)`)' }),
      to: Type.Union([Type.String(), Type.Array(Type.String())], { description: 'The recipients as sent' }),
      tenantKey: Type.String({ format: 'uuid' }),
    }),
  },
  { description: 'Queued: stored and handed to delivery; SMTP happens afterwards. A repeat of the idempotency key gets this same answer.' },
);

const BatchEmailResponse = Type.Object(
  {
    success: Type.Literal(true),
    message: Type.String(),
    data: Type.Object({
      message: Type.String(),
      count: Type.Integer({ description: 'E-mails queued' }),
      responses: Type.Array(Type.Object({ id: Type.String({ format: 'uuid' }) }), { description: 'One per e-mail, in request order' }),
      tenantKey: Type.String({ format: 'uuid' }),
    }),
  },
  { description: 'Every e-mail of the batch queued; a repeat of the idempotency key gets this same answer.' },
);

const errors = {
  400: ref(EmailErrorResponse, { description: '`Validation error`: details name every offending field; in a batch, the item index' }),
  401: ref(EmailErrorResponse, { description: '`Invalid tenant key or tenant not found`' }),
  403: ref(EmailErrorResponse, { description: "`Domain '<domain>' is not authorized for this tenant`" }),
  409: ref(EmailErrorResponse, { description: 'The idempotency key was used with another request, or its first request is still in progress' }),
  413: ref(EmailErrorResponse, { description: `Body larger than ${EMAIL_LIMITS.requestBytes} bytes` }),
  415: ref(EmailErrorResponse, { description: 'Content-Type must be application/json (UTF-8, uncompressed)' }),
  429: ref(EmailErrorResponse, { description: '`Too many requests`: over the tenant\'s requests per minute (default 100); see Retry-After' }),
  500: ref(EmailErrorResponse, { description: '`Server error`: retry the same request with the same idempotencyKey; it is sent at most once' }),
  503: ref(EmailErrorResponse, { description: '`Server error`: stored, but delivery could not be confirmed started; retry with the same idempotencyKey (sent once)' }),
};

/**
 * The e-mail API (spec 4.5, 4.6). Its failures use the e-mail error body (spec 7.2), so the routes live in their
 * own scope with their own error handler. The body schemas document the API; the checks themselves run in
 * `domain/email/email-message.ts` (every error at once, batch items named by index), so Fastify's validator is
 * switched off for these routes.
 */
export function emailRoutes(app: TypedApp, deps: { dispatcher: EmailDispatcher; compiler: StringTemplateCompiler; rateLimit: EmailRateLimit }): void {
  app.addSchema(EmailErrorResponse);
  app.register(async (scope) => {
    scope.setErrorHandler((error, request, reply) => sendEmailError(request, reply, error, EMAIL_LIMITS.requestBytes));
    const options = { bodyLimit: EMAIL_LIMITS.requestBytes, validatorCompiler: () => () => true } as const;

    scope.post(EMAIL_PATH, {
      ...options,
      schema: {
        operationId: 'sendEmail',
        summary: 'Queue one templated e-mail (spec 4.5)',
        description: 'Renders a built-in React template or the given Handlebars HTML with `data`, from a sender domain authorized for the tenant.',
        tags: ['email'],
        security: PUBLIC,
        body: SendEmailRequest,
        response: { 200: SendEmailResponse, ...errors },
      },
      handler: async (request, reply) => {
        const accepted = await acceptEmails({ em: request.em, ...deps, onDispatchFailure: (err) => request.log.error({ err }, 'e-mail delivery not confirmed started') }, 'single', request.body);
        if (accepted.replayed) reply.header('idempotent-replayed', 'true');
        return accepted.response;
      },
    });

    scope.post(EMAIL_BATCH_PATH, {
      ...options,
      schema: {
        operationId: 'sendEmailBatch',
        summary: `Queue up to ${EMAIL_LIMITS.batchSize} e-mails at once (spec 4.6)`,
        description: 'All or nothing: one invalid item refuses the whole batch, its details naming the item index. One idempotency key covers the batch.',
        tags: ['email'],
        security: PUBLIC,
        body: BatchEmailRequest,
        response: { 200: BatchEmailResponse, ...errors },
      },
      handler: async (request, reply) => {
        const accepted = await acceptEmails({ em: request.em, ...deps, onDispatchFailure: (err) => request.log.error({ err }, 'e-mail delivery not confirmed started') }, 'batch', request.body);
        if (accepted.replayed) reply.header('idempotent-replayed', 'true');
        return accepted.response;
      },
    });
  });
}
