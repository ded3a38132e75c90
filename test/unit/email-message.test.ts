import { describe, expect, it } from 'vitest';
import type { EmailRequestError } from '../../domain/email/email-errors.ts';
import { parseBatchRequest, parseSendRequest } from '../../domain/email/email-message.ts';
import { createEmailRenderer } from '../../domain/email/render-email.ts';
import { createStringTemplateCompiler } from '../../domain/email/string-templates.ts';

const compiler = createStringTemplateCompiler();
const renderEmail = createEmailRenderer({ compiler });
const base = { tenant_key: '123e4567-e89b-12d3-a456-426614174000', from: 'a@shop.example', to: 'b@inbox.example', subject: 'Hi' };

function failureOf(body: unknown): unknown {
  try {
    parseSendRequest(body, compiler);
    return 'accepted';
  } catch (error) {
    return (error as EmailRequestError).failure;
  }
}

describe('an e-mail request', () => {
  it('names an unknown field whatever its name, those every object inherits included', () => {
    for (const name of ['constructor', 'toString', 'valueOf', '__proto__', 'colour']) {
      const body = JSON.parse(`{"${name}": 1}`) as Record<string, unknown>;
      const failure = failureOf({ ...base, templateType: 'string', templateContent: '<p>x</p>', ...body }) as { details: Record<string, string> };
      expect(JSON.parse(JSON.stringify(failure.details)), name).toEqual({ [name]: 'is not a known field' });
    }
  });

  it("names a missing template source beside the schema's errors, in a batch by each e-mail's index", () => {
    const { tenant_key, to: _to, ...withoutTo } = base;
    let failure: unknown;
    try {
      parseBatchRequest({ tenant_key, emails: [{ ...withoutTo, templateType: 'string' }, { ...withoutTo, to: base.to, templateType: 'react', templateName: 'generic', data: { heading: 'h', bodyContent: 'b' } }, 7] }, compiler);
    } catch (error) {
      failure = (error as EmailRequestError).failure;
    }
    expect((failure as { details: Record<string, string> }).details).toEqual({
      'emails[0].to': 'is required',
      'emails[0].templateContent': 'is required when templateType is string',
      'emails[2]': 'must be object',
    });
  });

  it("reads a batch's own fields as a batch's: a top-level templateType is only an unknown field", () => {
    let failure: unknown;
    try {
      parseBatchRequest({ tenant_key: base.tenant_key, templateType: 'react' }, compiler);
    } catch (error) {
      failure = (error as EmailRequestError).failure;
    }
    expect((failure as { details: Record<string, string> }).details).toEqual({ emails: 'is required', templateType: 'is not a known field' });
  });

  it('renders a React template with any data it accepted: fields its template does not name are not its props', async () => {
    for (const extra of [{ key: { toString: 1 } }, { key: [{ toString: 1 }] }, { ref: 'x' }, { children: { a: 1 } }]) {
      const parsed = parseSendRequest({ ...base, templateType: 'react', templateName: 'generic', data: { heading: 'Hello there', bodyContent: 'Body', ...extra } }, compiler);
      const rendered = await renderEmail(parsed.messages[0]!.template, parsed.messages[0]!.data);
      expect(rendered.html, JSON.stringify(extra)).toContain('Hello there');
    }
  });
});
