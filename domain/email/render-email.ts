import { render } from '@react-email/render';
import type { EmailTemplate } from './email-message.ts';
import { plainTextOf } from './plain-text.ts';
import { RenderedTooLargeError, STRING_TEMPLATE_LIMITS, type StringTemplateCompiler } from './string-templates.ts';
import { reactTemplateElement } from './templates/react-templates.ts';

export interface RenderedEmail {
  readonly html: string;
  readonly text: string;
}

/**
 * Turns an accepted e-mail's template and data into its HTML and plain-text parts. The plain-text part is
 * derived from the HTML (links kept as text after their label) with React Email's own single-pass converter:
 * about ten times faster than its html-to-text based `toPlainText`, which parses its options on every call
 * and dominated the worker's time per e-mail (version pinned, output checked by test/email.test.ts), behind the
 * limits of `plain-text.ts` that keep it finite.
 */
export function createEmailRenderer(deps: { compiler: StringTemplateCompiler }) {
  return async function renderEmail(template: EmailTemplate, data: Readonly<Record<string, unknown>>): Promise<RenderedEmail> {
    if (template.type === 'react') {
      const element = reactTemplateElement(template.name, data);
      // One render; the text part is derived from its HTML like a string template's (half the work of a second render).
      const html = await render(element);
      // Built-in templates grow with their data only (bounded by the request size); the same cap holds for them.
      if (html.length > STRING_TEMPLATE_LIMITS.maxRenderedLength) throw new RenderedTooLargeError(html.length, STRING_TEMPLATE_LIMITS.maxRenderedLength);
      return { html, text: plainTextOf(html) };
    }
    const compiled = deps.compiler.compile(template.content);
    // Accepted templates compiled when they were accepted; one refused now means the limits changed since.
    if (typeof compiled !== 'function') throw new Error(`templateContent ${compiled.problem}`);
    // Throws RenderedTooLargeError, before building anything, when the output could exceed the cap.
    const html = compiled({ ...data });
    return { html, text: plainTextOf(html) };
  };
}

export type EmailRenderer = ReturnType<typeof createEmailRenderer>;
